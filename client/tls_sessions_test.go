package client_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// testCA issues the certificates of the mutual-TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

var serial atomic.Int64

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: "hotpath test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a leaf certificate for cn: a server certificate for
// 127.0.0.1, ::1 and localhost when server is set, else a client one.
func (ca *testCA) issue(t *testing.T, cn string, server bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// peerHandler reports what the server saw of the connection: whether the
// handshake resumed a session, and the CN of the client certificate ("-"
// for none).
var peerHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	cn := "-"
	if len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	fmt.Fprintf(w, "resumed=%t cn=%s", r.TLS.DidResume, cn)
})

// TestTLSSessionsKeepClientIdentity: resumption never hands one client's
// certificate to another (the issue: a process-wide session cache let a
// client with certificate "bob", or with none, resume the session of the
// client with "alice", and the server saw alice). Three clients, alice,
// bob and none, each connect twice to a mutual-TLS server, their idle
// connections closed in between: every connection shows the client's own
// identity, the first of each a full handshake, the second a resumption
// of the client's own session. Over TLS 1.3 and 1.2, HTTP/2 and HTTP/1.1,
// and with Stats timing the handshakes.
func TestTLSSessionsKeepClientIdentity(t *testing.T) {
	ca := newTestCA(t)
	serverCert := ca.issue(t, "server", true)
	ids := []struct {
		name string
		cn   string // the CN the server must see, "-" for none
		cert []tls.Certificate
	}{
		{"alice", "alice", []tls.Certificate{ca.issue(t, "alice", false)}},
		{"bob", "bob", []tls.Certificate{ca.issue(t, "bob", false)}},
		{"none", "-", nil},
	}
	versions := []struct {
		name string
		max  uint16
	}{{"TLS1.3", tls.VersionTLS13}, {"TLS1.2", tls.VersionTLS12}}
	paths := []struct {
		name  string
		h2    bool // the server offers h2 only, else http/1.1 only
		proto int  // the response's ProtoMajor
		opt   client.Option
	}{
		{"h2", true, 2, func(*client.Transport) {}},
		{"http1", false, 1, func(t *client.Transport) { t.Protocols = http1Only() }},
		{"stats", true, 2, func(t *client.Transport) { t.Stats = new(client.Stats) }},
	}
	for _, v := range versions {
		for _, p := range paths {
			t.Run(v.name+"/"+p.name, func(t *testing.T) {
				srv := httptest.NewUnstartedServer(peerHandler)
				srv.EnableHTTP2 = p.h2
				srv.TLS = &tls.Config{
					Certificates: []tls.Certificate{serverCert},
					ClientAuth:   tls.VerifyClientCertIfGiven,
					ClientCAs:    ca.pool,
					MaxVersion:   v.max,
				}
				srv.StartTLS()
				defer srv.Close()

				clients := make([]*http.Client, len(ids))
				for i, id := range ids {
					cfg := &tls.Config{RootCAs: ca.pool, Certificates: id.cert}
					clients[i] = client.New(p.opt, func(t *client.Transport) { t.TLSClientConfig = cfg })
					defer clients[i].CloseIdleConnections()
				}
				for round := 1; round <= 2; round++ {
					for i, c := range clients {
						resp, err := c.Get(srv.URL)
						if err != nil {
							t.Fatalf("client %s, connection %d: %v", ids[i].name, round, err)
						}
						body, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil {
							t.Fatal(err)
						}
						if resp.ProtoMajor != p.proto {
							t.Errorf("client %s, connection %d: %s, want HTTP/%d", ids[i].name, round, resp.Proto, p.proto)
						}
						if resp.TLS.Version != v.max {
							t.Errorf("client %s, connection %d: TLS version %#x, want %#x", ids[i].name, round, resp.TLS.Version, v.max)
						}
						want := fmt.Sprintf("resumed=%t cn=%s", round == 2, ids[i].cn)
						if string(body) != want {
							t.Errorf("client %s, connection %d: server saw %q, want %q", ids[i].name, round, body, want)
						}
					}
					for _, c := range clients {
						c.CloseIdleConnections()
					}
				}
			})
		}
	}
}

// recordingCache is a ClientSessionCache that counts its Puts.
type recordingCache struct {
	tls.ClientSessionCache
	puts atomic.Int64
}

func (c *recordingCache) Put(key string, cs *tls.ClientSessionState) {
	c.puts.Add(1)
	c.ClientSessionCache.Put(key, cs)
}

// TestTLSSessionCacheOwnership: a client gets a session cache of its own,
// even when two clients are built with the same Option value, and shares
// it with the fallback built from its fields; a cache the caller brings is
// used as it is; the caller's tls.Config is never modified.
func TestTLSSessionCacheOwnership(t *testing.T) {
	user := &tls.Config{ServerName: "example.com"}
	opt := func(t *client.Transport) { t.TLSClientConfig = user }
	tr1 := client.New(opt).Transport.(*client.Transport)
	tr2 := client.New(opt).Transport.(*client.Transport)
	cfg1, cfg2 := client.TLSConfigOf(tr1), client.TLSConfigOf(tr2)
	c1, c2 := cfg1.ClientSessionCache, cfg2.ClientSessionCache
	if c1 == nil || c2 == nil || c1 == c2 {
		t.Fatalf("caches %p and %p: want two, distinct", c1, c2)
	}
	if cfg1 == cfg2 || cfg1 == user || cfg1.ServerName != "example.com" {
		t.Fatalf("configs %p and %p (ServerName %q): want two clones of the caller's", cfg1, cfg2, cfg1.ServerName)
	}
	if user.ClientSessionCache != nil {
		t.Fatal("a Transport modified the caller's tls.Config")
	}
	if fb := client.BuiltFallback(tr1); fb.TLSClientConfig != cfg1 {
		t.Fatalf("the fallback's TLS config %p is not the Transport's %p: two session caches for one client", fb.TLSClientConfig, cfg1)
	}
	d1, d2 := client.NewHTTPTransport(), client.NewHTTPTransport()
	if d1.TLSClientConfig.ClientSessionCache == d2.TLSClientConfig.ClientSessionCache || d1.TLSClientConfig.ClientSessionCache == c1 {
		t.Fatal("NewHTTPTransport shares a session cache")
	}

	// A cache the caller brings is the one used, with Stats or without.
	srv := httptest.NewUnstartedServer(peerHandler)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, stats := range []bool{false, true} {
		mine := &recordingCache{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		c := client.New(func(t *client.Transport) {
			t.TLSClientConfig = &tls.Config{RootCAs: pool, ClientSessionCache: mine}
			if stats {
				t.Stats = new(client.Stats)
			}
		})
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.CloseIdleConnections()
		if mine.puts.Load() == 0 {
			t.Errorf("stats %t: the caller's session cache was not used", stats)
		}
	}
}
