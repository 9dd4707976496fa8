package lab

import "strings"

// Source is one seed article: the text whose claims the lab tests. Reports
// cite it by its title and URL, or, where the article prints no URL, by its
// title and author. The fields are copied from the article as printed; a
// field the article does not print is empty, and reports then say "not
// printed" rather than guess. (None of the five seeds prints its own URL
// or its author: reports cite their titles and dates, and seed 002's link
// to its benchmark code.)
type Source struct {
	// Seed is the seed's number, "000" to "004" (Experiment.Seed).
	Seed string `json:"seed"`
	// Title is the article's title as printed.
	Title string `json:"title"`
	// Author, Site, Date and URL as printed in the article; empty when it
	// does not print them. Date keeps the article's own format.
	Author string `json:"author,omitempty"`
	Site   string `json:"site,omitempty"`
	Date   string `json:"date,omitempty"`
	URL    string `json:"url,omitempty"`
	// Code is where the article says its benchmark code lives, if it says.
	Code string `json:"code,omitempty"`
	// Claim quotes the article's headline claim, word for word.
	Claim string `json:"claim"`
}

// Sources lists the seed articles, by seed number.
var Sources = []Source{
	{
		Seed:  "000",
		Title: "net/http — Optimization",
		Claim: "Fourteen scenarios where net/http code allocates more, blocks longer, or wastes connections versus what the stdlib actually offers. […] Anchored at Go 1.23, amd64, loopback.",
	},
	{
		Seed:  "001",
		Title: "From 20k to 60k req/sec: Building a High-Performance HTTP Server in Go",
		Claim: "My first HTTP/1.1 server in Go hit about 20k req/sec. […] The biggest performance gain came from removing sync.Pool. […] Result: 35k → 60k req/sec (+71%)",
	},
	{
		Seed:  "002",
		Title: "Go HTTP: Impact of NOT Reading Response Bodies to EOF",
		Date:  "2025-09-21T12:58:36+02:00",
		Code:  "https://github.com/pessolato/httpmicrobench",
		Claim: "Request latency: ~44.5% faster on average, ~65% faster at median. Client CPU: ~50% lower. Server CPU: ~47% lower. Connection reuse: Preserved with draining, disabled without it.",
	},
	{
		Seed:  "003",
		Title: "Go HTTP Clients: net/http vs The Fast Ones",
		Date:  "2025-10-08",
		Claim: "I benchmarked 4 HTTP clients. FastHTTP is 2x faster. Here's why you probably shouldn't use it.",
	},
	{
		Seed:  "004",
		Title: "Basic Micro-Optimizations Part 2",
		Date:  "Nov 28, 2014",
		Claim: "Result? 85KB (from 48MB), 188ms (from 432ms), 1GC (from 753) which required 0.35ms (from 175ms).",
	},
}

// SourceOf returns the source of a seed number, and false if none.
func SourceOf(seed string) (Source, bool) {
	for _, s := range Sources {
		if s.Seed == seed {
			return s, true
		}
	}
	return Source{}, false
}

// Byline says who published the source and when, as far as it says, and
// whether it prints its URL (reports show the URL beside the title):
// "2025-10-08; author and URL not printed".
func (s Source) Byline() string {
	var parts, missing []string
	if s.Author != "" {
		parts = append(parts, "by "+s.Author)
	} else {
		missing = append(missing, "author")
	}
	if s.Site != "" {
		parts = append(parts, s.Site)
	}
	if s.Date != "" {
		parts = append(parts, s.Date)
	} else {
		missing = append(missing, "date")
	}
	if s.URL == "" { // reports print the URL itself beside the title
		missing = append(missing, "URL")
	}
	out := strings.Join(parts, ", ")
	if len(missing) > 0 {
		m := missing[0]
		for i, x := range missing[1:] {
			if i == len(missing)-2 {
				m += " and " + x
			} else {
				m += ", " + x
			}
		}
		if out != "" {
			out += "; "
		}
		out += m + " not printed"
	}
	return out
}
