package client

// Deadlines both engines set on their sockets.

import "time"

// aLongTimeAgo is a deadline in the past: setting it wakes blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)
