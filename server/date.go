package server

import (
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// dateEntry is one formatted Date value and the Unix second it stands for.
type dateEntry struct {
	unix int64
	b    [wire.HTTPDateLen]byte
}

// cachedDate holds the current Date header value. It is rebuilt at most
// once a second, by whichever connection first notices the second changed;
// readers never see a torn value because entries are immutable.
var cachedDate atomic.Pointer[dateEntry]

// appendDate appends the IMF-fixdate for now, from the cache.
func appendDate(dst []byte, now time.Time) []byte {
	sec := now.Unix()
	e := cachedDate.Load()
	if e == nil || e.unix != sec {
		e = &dateEntry{unix: sec}
		wire.AppendHTTPDate(e.b[:0], now)
		cachedDate.Store(e)
	}
	return append(dst, e.b[:]...)
}
