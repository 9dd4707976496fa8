// Package middleware holds the fixes of seed 000 (the net/http
// optimization catalog) as net/http middleware: each is a
// func(http.Handler) http.Handler, in a file of its own, and works the same
// on net/http's server and on hotpath's (github.com/hotpathhq/hotpath/server).
//
//	h := middleware.RequestID(
//		middleware.AccessLog(logger)(
//			middleware.Recover(logger)(
//				middleware.BodyLimitFunc(1<<20, jsonhttp.Error)(mux))))
//
// The response-writer wrappers here keep what handlers look for:
// http.Flusher, http.Hijacker, io.ReaderFrom and io.StringWriter pass
// through to the server's writer, and an Unwrap method lets
// http.ResponseController reach the rest (deadlines, full duplex).
package middleware
