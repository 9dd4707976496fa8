// Package pool holds bounded pools of *bytes.Buffer, *bufio.Reader and
// *bufio.Writer for net/http handlers.
//
// They differ from a bare sync.Pool in two ways: a buffer that grew past
// the pool's bound is dropped on Put instead of being handed to every
// later borrower, and a reader or writer is reset before it goes back, so
// no borrower sees the previous one's bytes or keeps its source alive.
//
// # When it pays, and when it does not
//
// Pooling is a win behind a profile, not an always-ship default. It pays
// when runtime.mallocgc from bytes.growSlice or bufio.NewReaderSize shows
// in a handler's profile; it does not pay for bodies that fit in one Read
// (skip the buffering), for streamed bodies (never materialize them), or
// for services at a few hundred requests per second, where the pool's
// Get/Put cost is all you get. When bodies vary wildly in size, every
// large body's buffer is dropped on Put (as it should be) and the pool
// gains nothing. The benchmarks (go test -bench . -benchmem ./pool)
// compare fresh and pooled buffers for small, large and mixed bodies.
package pool
