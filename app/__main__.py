from app.cli import main

if __name__ == "__main__":  # a spawned child process (app.store.convert) imports this module
    raise SystemExit(main())
