package websocket

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestAutobahnClient is Autobahn's fuzzing server driving this package's
// client (Dial, then a Read/Write echo loop per case), when
// HOTPATH_AUTOBAHN_SERVER names one (host:port of `kosoku -m
// fuzzingserver`; .ci/run starts it and reads the verdicts from its
// reports). Without it the test is skipped: it needs the runner.
func TestAutobahnClient(t *testing.T) {
	addr := os.Getenv("HOTPATH_AUTOBAHN_SERVER")
	if addr == "" {
		t.Skip("HOTPATH_AUTOBAHN_SERVER not set: no Autobahn fuzzing server to drive the client")
	}
	base := "ws://" + addr
	ctx := context.Background()
	c, _, err := Dial(ctx, base+"/getCaseCount", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	n, err := strconv.Atoi(string(msg))
	if err != nil {
		t.Fatalf("case count %q", msg)
	}
	for i := 1; i <= n; i++ {
		autobahnCase(t, fmt.Sprintf("%s/runCase?case=%d&agent=hotpath", base, i))
	}
	c, _, err = Dial(ctx, base+"/updateReports?agent=hotpath", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(1000, "")
	t.Logf("%d cases run", n)
}

// autobahnCase echoes every message of one case until it ends.
func autobahnCase(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Compression offers permessage-deflate, for sections 12 and 13,
	// where every echo is to go compressed.
	c, _, err := Dial(ctx, url, &DialOptions{Compression: true, Options: Options{CompressionThreshold: -1}})
	if err != nil {
		t.Logf("%s: %v", url, err)
		return
	}
	defer c.CloseNow()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return // the case's end: a close, or a failure the report judges
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}
