// Package middleware holds net/http middleware that avoids the common
// costly patterns (a request dumped for the log, a status writer that hides
// Flusher and Hijacker, request IDs from the clock): each is a
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
