/// Placeholder; the in-process HTTP/1.1 test server lands in the next commit.
public enum CourierTestServerPlaceholder {}
