package a

import (
	"encoding/json"
	"net/http"
)

func fetch(c *http.Client, url string, v any) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // want `resp.Body is closed before EOF`
	return json.NewDecoder(resp.Body).Decode(v)
}
