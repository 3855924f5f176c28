// The daemon. Filled in by issue 4.
print("mpris-bridge")
