from draftlight.cli import main

if __name__ == "__main__":  # not when a child process imports this module as it starts
    raise SystemExit(main())
