// Package hotpathclient imports hotpath's client: HP012 points at its drain.
package hotpathclient

import (
	"encoding/json"
	"net/http"

	"github.com/hotpathhq/hotpath/client"
)

var hc = client.New()

func decode(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // want `or send with hotpath's client.New\(\), which drains on Close \(client.DrainBody\)`
	return json.NewDecoder(resp.Body).Decode(v)
}

// The response variable is assigned again after the deferred Close: the
// closure a fix would write would read the new one, so there is no fix.
func retried(url string, v any) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // want `resp.Body is closed before EOF`
	if resp.StatusCode == http.StatusServiceUnavailable {
		resp, err = hc.Get(url)
		if err != nil {
			return err
		}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
