"""The main window and the conversation in it: toolbar, chat column, composer, conversation list,
Compare and Settings."""
