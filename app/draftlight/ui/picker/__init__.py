"""The model picker: search the hub, choose a file and a matching draft, download them, manage
installed models."""
