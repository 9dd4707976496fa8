package client

// The internal test helpers the external tests (package client_test) use.
var (
	ScriptServer = scriptServer
	ReadReq      = readReq
	MustReq      = mustReq
)
