"""What the tests share that is not a test: loopback servers, scripted engines and models,
fixture modules imported by name, and the suite's guard on the user's folders."""
