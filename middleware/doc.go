// Package middleware holds net/http middleware that avoids the common
// costly patterns (a request dumped for the log, a status writer that hides
// Flusher and Hijacker, request IDs from the clock), each in a file of its
// own, and works the same on net/http's server and on hotpath's
// (github.com/hotpathhq/hotpath/server).
//
// Each middleware is a struct, configured by its fields as an http.Server
// is, whose zero value works. Its Wrap method puts it around a handler,
// and the method value is the func(http.Handler) http.Handler that
// routers take (chi: r.Use(middleware.AccessLog{Logger: logger}.Wrap)):
//
//	h := middleware.RequestID{}.Wrap(
//		middleware.AccessLog{Logger: logger}.Wrap(
//			middleware.Recover{Logger: logger}.Wrap(
//				middleware.BodyLimit{MaxBytes: 1 << 20, Reply: jsonhttp.Error}.Wrap(mux))))
//
// The response-writer wrappers here keep what handlers look for:
// http.Flusher, http.Hijacker, io.ReaderFrom and io.StringWriter pass
// through to the server's writer, and an Unwrap method lets
// http.ResponseController reach the rest (deadlines, full duplex).
package middleware
