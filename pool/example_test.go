package pool_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/hotpathhq/hotpath/pool"
)

// bodies is shared by every handler: buffers up to 64 KiB are reused,
// larger ones are left to the garbage collector.
var bodies = pool.NewBuffers(64 << 10)

func ExampleBuffers() {
	body := strings.NewReader("a request body") // r.Body in a handler
	buf := bodies.Get()
	defer bodies.Put(buf)
	if _, err := io.Copy(buf, body); err != nil {
		return
	}
	fmt.Printf("%x\n", sha256.Sum256(buf.Bytes()))
	// Output: e5dfdaf280ccd7f081f1eb6d31783d7449cfa525788c6758736dd455aa51cbb2
}

var readers = pool.NewReaders(4096)

func ExampleReaders() {
	body := strings.NewReader("one\ntwo\n") // r.Body in a handler
	br := readers.Get(body)
	defer readers.Put(br) // unread bytes are discarded, never seen by the next borrower
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		fmt.Print(line)
	}
	// Output:
	// one
	// two
}
