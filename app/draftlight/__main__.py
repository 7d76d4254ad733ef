from draftlight.cli import main

if __name__ == "__main__":  # a spawned child process (draftlight.store.convert) imports this module
    raise SystemExit(main())
