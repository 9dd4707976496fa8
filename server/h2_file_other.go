//go:build !linux

package server

import "io"

// readFromFile is the mapped-file path of h2_file_linux.go; elsewhere a
// file's body is copied.
func (w *h2ResponseWriter) readFromFile(io.Reader) (int64, bool, error) { return 0, false, nil }

// h2ReadFrom is Ctx.ReadFrom on HTTP/2: copied.
func (x *Ctx) h2ReadFrom(src io.Reader) (int64, error) { return x.readFromCopy(src) }

// isFault is for mapped files' pages (h2_file_linux.go): none here.
func isFault(error) bool { return false }
