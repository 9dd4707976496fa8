package server

import (
	"cmp"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hotpathhq/hotpath/wire"
)

// A file's body over HTTP/2 cannot go to the socket with sendfile: its
// bytes must be cut into DATA frames. Copying it through user space costs
// a read into a buffer, a copy into the write buffer and the socket's
// write. Instead, the file is mapped a window at a time and its DATA
// frames are queued by reference (h2Ref): the writer hands the pages to
// writev, and the kernel copies them once, from the page cache to the
// socket. Measured here on a 1 GB file over loopback: 0.28-0.34 CPU-s/GB
// against 0.49-0.57 for read and write.
//
// Only the kernel ever touches the mapping: a file truncated under it
// makes writev fail with EFAULT, where a read of the mapping from Go
// would be a SIGBUS. So the mapping is used only on a plain socket (TCP
// or Unix, no TLS): there nothing in user space reads the bytes.

const (
	// h2MapWindow is the most of the file mapped at once; two
	// windows at most are mapped per stream, one being written while
	// the next is queued.
	h2MapWindow = 8 << 20
	// h2MapMin is the smallest rest of a file worth mapping: below it,
	// mapping costs more than the copy it saves.
	h2MapMin = 1 << 20
)

// Bounds on the streams that send from mapped files at once (each maps
// two windows at most): past them a file is copied. They keep the
// mappings far below the kernel's vm.max_map_count (65,530 by default),
// past which any mmap of the Go runtime fails fatally, and a client that
// opens many downloads and stalls them from pinning a mapping each.
const (
	h2MaxMappedPerConn = 8
	h2MaxMappedStreams = 1024 // per Server
)

// takeMapSlot reserves a place for one of the connection's streams to
// send from a mapped file; false when the connection or the server has
// none left.
func (sc *h2Conn) takeMapSlot() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.mapped >= h2MaxMappedPerConn {
		return false
	}
	if sc.srv.h2Mapped.Add(1) > h2MaxMappedStreams {
		sc.srv.h2Mapped.Add(-1)
		return false
	}
	sc.mapped++
	return true
}

func (sc *h2Conn) releaseMapSlot() {
	sc.mu.Lock()
	sc.mapped--
	sc.mu.Unlock()
	sc.srv.h2Mapped.Add(-1)
}

// isFault reports whether a write failed on memory it could not read: a
// mapped file's pages past the file's end, after the file was truncated.
func isFault(err error) bool { return errors.Is(err, syscall.EFAULT) }

// A mappableFile is an *os.File, or a wrapper around one that os makes.
type mappableFile interface {
	io.Reader
	io.Seeker
	Stat() (os.FileInfo, error)
	SyscallConn() (syscall.RawConn, error)
}

// h2MappedBytes counts the bytes sent from mapped files (for tests).
var h2MappedBytes atomic.Int64

// errNotMapped is sendMapped's answer when the rest of the file cannot be
// mapped: the caller copies it instead.
var errNotMapped = errors.New("server: file not mappable")

// h2MappedFile returns the file behind src, an *os.File or an
// *io.LimitedReader of one (as http.ServeContent's io.CopyN makes), and
// the range [pos, end) of it that src has left, when that range can go
// from mapped pages on st: a plain socket, a regular file, at least
// h2MapMin bytes, a response with a body.
func h2MappedFile(st *h2Stream, src io.Reader) (f mappableFile, lr *io.LimitedReader, pos, end int64, ok bool) {
	switch st.sc.nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nil, nil, 0, 0, false
	}
	if st.sc.tlsState != nil || st.isHead {
		return nil, nil, 0, 0, false
	}
	limit := int64(-1)
	if lr, _ = src.(*io.LimitedReader); lr != nil {
		src, limit = lr.R, lr.N
	}
	// *os.File, or what os wraps it in when io.Copy goes through its
	// WriteTo (which hides the file's own WriteTo from io.Copy).
	if f, _ = src.(mappableFile); f == nil {
		return nil, nil, 0, 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, 0, 0, false
	}
	if pos, err = f.Seek(0, io.SeekCurrent); err != nil {
		return nil, nil, 0, 0, false
	}
	end = fi.Size()
	if limit >= 0 {
		end = min(end, pos+limit)
	}
	return f, lr, pos, end, end-pos >= h2MapMin
}

// readFromFile is the http.Handler's ReadFrom for a file (h2MappedFile):
// its first bytes through Write when they decide a sniffed Content-Type,
// the rest by reference to its mapped pages. ok is false when that does
// not apply; n bytes may have been written then, the rest is left in src.
func (w *h2ResponseWriter) readFromFile(src io.Reader) (n int64, ok bool, err error) {
	r := &w.r
	if _, _, _, _, can := h2MappedFile(w.st, src); !can || r.err != nil {
		return 0, false, nil
	}
	if !r.committed() && w.sniffType && wire.BodyAllowed(w.status) && len(r.buf) < sniffLen {
		n, err = io.CopyN(writerOnly{w}, src, int64(sniffLen-len(r.buf)))
		if err == io.EOF {
			return n, true, nil // the file ends here
		}
		if err != nil {
			return n, true, err
		}
	}
	m, ok, err := r.h2SendMapped(src, w.FlushError)
	return n + m, ok, err
}

// h2ReadFrom is Ctx.ReadFrom on HTTP/2: a file from mapped pages where it
// can (h2MappedFile), otherwise copied.
func (x *Ctx) h2ReadFrom(src io.Reader) (int64, error) {
	n, ok, err := x.resp.h2SendMapped(src, x.Flush)
	if ok {
		return n, err
	}
	c, err := x.readFromCopy(src)
	return n + c, err
}

// h2SendMapped sends the file src reads from by reference to its mapped
// pages (sendMapped), flush having queued the head and what the body
// held, when it can: a file big enough on a plain TCP connection, a body
// the status allows, a declared length it does not pass. ok is false when
// it does not apply, or the rest of the file could not be mapped (n bytes
// were sent then; the caller copies the rest from src).
func (r *response) h2SendMapped(src io.Reader, flush func() error) (n int64, ok bool, err error) {
	f, lr, pos, end, can := h2MappedFile(r.st, src)
	if !can || r.err != nil || (r.state != respCollecting && r.state != respFixed) || !wire.BodyAllowed(r.status) ||
		r.declaredLen >= 0 && r.sent+int64(len(r.buf))+end-pos > r.declaredLen {
		return 0, false, nil
	}
	n, err = r.st.sendMapped(f, lr, pos, end, flush)
	r.sent += n
	if err == errNotMapped {
		return n, false, nil
	}
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, true, err
}

// sendMapped sends [pos, end) of f, where f's offset is pos, as DATA
// frames by reference to mapped windows of the file, after flush has
// queued the head and what the body held. It returns the bytes sent;
// lr's N and f's offset move past them. errNotMapped means that the
// rest could not be mapped (nothing of it is sent): the caller copies
// it.
//
// What a stream maps follows what the client lets it send: nothing is
// mapped while its send windows are shut, a window is mapped no larger
// than the flow-control windows open when it is mapped (at least
// h2MapMin, at most h2MapWindow), and only the pages the windows allow
// are populated ahead of the writer. A stream holds two mappings at
// most, and a connection and a server map for a bounded number of
// streams at once (h2MaxMappedPerConn, h2MaxMappedStreams); past either,
// the file is copied.
func (st *h2Stream) sendMapped(f mappableFile, lr *io.LimitedReader, pos, end int64, flush func() error) (n int64, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, errNotMapped
	}
	if !st.sc.takeMapSlot() {
		return 0, errNotMapped
	}
	defer st.sc.releaseMapSlot()
	if err := flush(); err != nil {
		return 0, err
	}
	page := int64(os.Getpagesize())
	// mapAt maps a window of the file from pos, sized by the send
	// window open now (avail), and populates its first avail bytes.
	mapAt := func(pos, avail int64) (m, p []byte, err error) {
		off := pos &^ (page - 1)
		size := min(end-pos, h2MapWindow, max(avail, h2MapMin))
		cerr := rc.Control(func(fd uintptr) {
			m, err = syscall.Mmap(int(fd), off, int(pos-off+size), syscall.PROT_READ, syscall.MAP_SHARED)
		})
		if err = cmp.Or(cerr, err); err != nil {
			return nil, nil, err
		}
		// Fault in what the windows let go now, in one call rather
		// than page by page in the writer's writev; the rest is
		// faulted in as the windows open. (Before Linux 5.14 the
		// advice is unknown: the pages then fault in as they go.)
		unix.Madvise(m[:pos-off+min(avail, size)], unix.MADV_POPULATE_READ)
		return m, m[pos-off:], nil
	}
	start := pos
	// Two windows at most: the one the writer has in hand and the one
	// queued behind it.
	var prev []byte
	var prevBatch uint64
	for pos < end {
		avail, werr := st.waitSendWindow()
		if werr != nil {
			err = werr
			break
		}
		m, p, merr := mapAt(pos, avail)
		if merr != nil {
			// Some file systems cannot; or out of address space: the
			// rest is copied.
			err = errNotMapped
			break
		}
		batch, qerr := st.sendDataRef(p, f, pos+int64(len(p)))
		if prev != nil {
			st.sc.waitWritten(prevBatch)
			syscall.Munmap(prev)
		}
		prev, prevBatch = m, batch
		if qerr != nil {
			err = qerr
			break
		}
		pos += int64(len(p))
	}
	if prev != nil {
		st.sc.waitWritten(prevBatch)
		syscall.Munmap(prev)
	}
	if err == nil && st.mapFaulted() {
		err = errH2FileFault
	}
	n = pos - start
	h2MappedBytes.Add(n)
	if lr != nil {
		lr.N -= n
	}
	// The file's offset moves past what was sent, as a read's would.
	if _, serr := f.Seek(pos, io.SeekStart); serr != nil && err == nil {
		err = serr
	}
	return n, err
}
