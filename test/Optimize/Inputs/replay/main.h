// protected harness (fake)
