package mcpbridge

// listenAddress is loopback TCP: Windows before 10 1803, and Wine, have
// no AF_UNIX. Any local user can reach the port; the handshake's proof of
// the session key is what keeps them out.
func listenAddress(string) (network, address string) { return "tcp", "127.0.0.1:0" }
