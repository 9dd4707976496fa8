package lab

import (
	"io"
	"log"
)

// discardLog silences servers' error logs (clients the lab disconnects on
// purpose would fill the terminal).
var discardLog = log.New(io.Discard, "", 0)
