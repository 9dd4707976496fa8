//go:build unix

package websocket

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// A browser talks to the server: headless Chromium loads a page whose
// script waits 300 ms (the page's connection parks), then opens a
// WebSocket to the page's own server, echoes text and binary messages
// (100 KB and 70 KB among them), closes with 1000, and posts what it saw
// back. Over http:// the WebSocket is an HTTP/1.1
// upgrade; over https:// the page comes over HTTP/2 and, the server
// allowing extended CONNECT, Chromium opens the WebSocket on that
// connection (RFC 8441). Both APIs, permessage-deflate accepted (Chromium
// offers it).
//
// It runs when HOTPATH_BROWSER is set (CI sets it after installing
// Chromium), with the browser named by HOTPATH_CHROMIUM or found on
// PATH as chromium, chromium-browser or google-chrome.

// browserPage is the page: its script reports "ok <extensions>" or
// "fail <why>" to /result.
const browserPage = `<!doctype html><title>hotpath websocket</title><script>
async function run() {
  // Past the server's idle trim (100 ms): the page's connection parks
  // before the WebSocket opens on it (over HTTP/2).
  await new Promise((res) => setTimeout(res, 300));
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.binaryType = "arraybuffer";
  const got = [];
  let wake = null;
  ws.onmessage = (e) => { got.push(e.data); if (wake) { const w = wake; wake = null; w(); } };
  const closed = new Promise((res) => { ws.onclose = (e) => res(e.code); });
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = () => rej("the WebSocket did not open"); });
  const next = () => got.length ? Promise.resolve(got.shift()) : new Promise((res) => { wake = () => res(got.shift()); });
  for (const s of ["hello", "", "héllo wörld", "x".repeat(100000)]) {
    ws.send(s);
    if (await next() !== s) throw "text of " + s.length + " characters came back changed";
  }
  const b = new Uint8Array(70000);
  for (let i = 0; i < b.length; i++) b[i] = i % 251;
  ws.send(b);
  const r = new Uint8Array(await next());
  if (r.length !== b.length || r.some((v, i) => v !== b[i])) throw "binary of 70000 bytes came back changed";
  ws.close(1000, "done");
  const code = await closed;
  if (code !== 1000) throw "closed with " + code;
  return "ok " + ws.extensions;
}
run().then((r) => fetch("/result", {method: "POST", body: r}), (e) => fetch("/result", {method: "POST", body: "fail " + e}));
</script>`

// browserServer serves the page, /ws (the echo of the event API) and
// /result on one API of hotpath's server; results gets each report, ws
// the protocol each WebSocket handshake came over.
func browserServer(native bool, results, ws chan<- string) *server.Server {
	opts := &AcceptOptions{Compression: true}
	s := &server.Server{ExtendedConnect: true}
	if native {
		s.Native = func(x *server.Ctx) {
			switch string(x.Path()) {
			case "/ws":
				ws <- string(x.Proto())
				if c, err := AcceptNative(x, opts); err == nil {
					c.Start(&echoEvents{})
				}
			case "/result":
				b, _ := x.ReadBody(nil)
				results <- string(b)
			default:
				x.SetContentType("text/html; charset=utf-8")
				x.WriteString(browserPage)
			}
		}
		return s
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ws <- r.Proto
		if c, err := Accept(w, r, opts); err == nil {
			c.Start(&echoEvents{})
		}
	})
	mux.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		results <- string(b)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, browserPage)
	})
	s.Handler = mux
	return s
}

func findChromium(t *testing.T) string {
	if p := os.Getenv("HOTPATH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("HOTPATH_BROWSER is set but no Chromium was found (HOTPATH_CHROMIUM, or chromium on PATH)")
	return ""
}

func TestBrowser(t *testing.T) {
	if os.Getenv("HOTPATH_BROWSER") == "" {
		t.Skip("set HOTPATH_BROWSER=1 to open the pages in headless Chromium (CI does)")
	}
	chromium := findChromium(t)
	cert := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate
	cert.Close()
	for _, native := range []bool{false, true} {
		for _, overTLS := range []bool{false, true} {
			name := map[bool]string{false: "handler", true: "native"}[native] + "/" + map[bool]string{false: "http", true: "https"}[overTLS]
			t.Run(name, func(t *testing.T) {
				results, ws := make(chan string, 4), make(chan string, 4)
				s := browserServer(native, results, ws)
				ln := listen(t)
				url := "http://" + ln.Addr().String() + "/"
				if overTLS {
					s.TLSConfig = &tls.Config{Certificates: cert.TLS.Certificates}
					go s.ServeTLS(ln, "", "")
					url = "https://" + ln.Addr().String() + "/"
				} else {
					go s.Serve(ln)
				}
				t.Cleanup(func() { s.Close() })

				cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
					"--ignore-certificate-errors",
					"--no-first-run", "--disable-extensions",
					"--user-data-dir="+t.TempDir(), url)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers too, at the end
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					cmd.Wait()
				})
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var proto, result string
				for result == "" {
					select {
					case p := <-ws:
						proto = p
					case result = <-results:
					case <-ctx.Done():
						t.Fatalf("no report from the page in 60 s (WebSocket handshakes: %q); Chromium said:\n%s", proto, lastLines(out.String(), 20))
					}
				}
				want := "HTTP/1.1"
				if overTLS {
					want = "HTTP/2.0"
				}
				if !strings.HasPrefix(result, "ok ") || proto != want {
					t.Fatalf("the page reported %q over a WebSocket handshake on %q; want ok over %s", result, proto, want)
				}
				if !strings.Contains(result, "permessage-deflate") {
					t.Errorf("the page reported %q: permessage-deflate, which Chromium offers, was not negotiated", result)
				}
				t.Logf("%s: %s, WebSocket over %s", url, result, proto)
			})
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
