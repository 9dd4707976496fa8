// Package vet is hotpath vet: go/analysis analyzers that catch the net/http
// anti-patterns that `hotpath lab` measures (an unread response body, a
// handler that allocates a buffer per request...) in users' code, one
// package per rule, and a driver that runs them over packages and reports
// in text, JSON or SARIF 2.1.0.
//
// The rules, with stable IDs:
//
//	HP001 per-call-transport   HP009 server-idle-timeout
//	HP002 readall-proxy        HP010 tls-per-call
//	HP003 idle-conns-per-host  HP011 dump-request
//	HP004 marshal-write        HP012 undrained-body
//	HP005 buffer-per-request   HP013 read-header-timeout
//	HP006 string-routing       HP014 time-request-id
//	HP007 header-literal       HP016 client-timeout
//	HP008 bufio-per-request
//
// HP015 unclosed-body (a response body never closed) is off by default,
// since bodyclose covers it: it runs only when named (Config.Rules,
// hotpath vet --rules HP015) or with every rule (Config.All, hotpath vet
// --all).
//
// Each finding can be suppressed with //nolint:<rule> or
// //hotpath:ignore <rule> <reason> on its line or the line above, where
// <rule> is the ID or the name.
package vet

import (
	"fmt"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/bufferperrequest"
	"github.com/hotpathhq/hotpath/vet/bufioperrequest"
	"github.com/hotpathhq/hotpath/vet/clienttimeout"
	"github.com/hotpathhq/hotpath/vet/dumprequest"
	"github.com/hotpathhq/hotpath/vet/headerliteral"
	"github.com/hotpathhq/hotpath/vet/idleconnsperhost"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
	"github.com/hotpathhq/hotpath/vet/marshalwrite"
	"github.com/hotpathhq/hotpath/vet/percalltransport"
	"github.com/hotpathhq/hotpath/vet/readallproxy"
	"github.com/hotpathhq/hotpath/vet/readheadertimeout"
	"github.com/hotpathhq/hotpath/vet/serveridletimeout"
	"github.com/hotpathhq/hotpath/vet/stringrouting"
	"github.com/hotpathhq/hotpath/vet/timerequestid"
	"github.com/hotpathhq/hotpath/vet/tlspercall"
	"github.com/hotpathhq/hotpath/vet/unclosedbody"
	"github.com/hotpathhq/hotpath/vet/undrainedbody"
)

// Rule describes one check: its stable ID (HP012), short name
// (undrained-body), catalog exercise, summary and help text.
type Rule = rule.Rule

// Check pairs a rule with its analyzer.
type Check struct {
	Rule     Rule
	Analyzer *analysis.Analyzer
}

// Checks returns every rule in ID order, including those off by default.
func Checks() []Check {
	return []Check{
		{percalltransport.Rule, percalltransport.Analyzer},
		{readallproxy.Rule, readallproxy.Analyzer},
		{idleconnsperhost.Rule, idleconnsperhost.Analyzer},
		{marshalwrite.Rule, marshalwrite.Analyzer},
		{bufferperrequest.Rule, bufferperrequest.Analyzer},
		{stringrouting.Rule, stringrouting.Analyzer},
		{headerliteral.Rule, headerliteral.Analyzer},
		{bufioperrequest.Rule, bufioperrequest.Analyzer},
		{serveridletimeout.Rule, serveridletimeout.Analyzer},
		{tlspercall.Rule, tlspercall.Analyzer},
		{dumprequest.Rule, dumprequest.Analyzer},
		{undrainedbody.Rule, undrainedbody.Analyzer},
		{readheadertimeout.Rule, readheadertimeout.Analyzer},
		{timerequestid.Rule, timerequestid.Analyzer},
		{unclosedbody.Rule, unclosedbody.Analyzer},
		{clienttimeout.Rule, clienttimeout.Analyzer},
	}
}

// Analyzers returns every rule's analyzer, including those off by default
// (Rule.OffByDefault): drivers that run all they are given must leave those
// out or make them inert unless asked for (see cmd/hotpath-vet).
func Analyzers() []*analysis.Analyzer {
	var out []*analysis.Analyzer
	for _, c := range Checks() {
		out = append(out, c.Analyzer)
	}
	return out
}

// Select returns the checks whose ID or name is in names (every rule on by
// default when names is empty), or an error naming an unknown rule.
func Select(names []string) ([]Check, error) {
	all := Checks()
	if len(names) == 0 {
		var on []Check
		for _, c := range all {
			if !c.Rule.OffByDefault {
				on = append(on, c)
			}
		}
		return on, nil
	}
	var out []Check
	for _, n := range names {
		found := false
		for _, c := range all {
			if n == c.Rule.ID || n == c.Rule.Name || n == c.Rule.AnalyzerName() {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			return nil, &UnknownRuleError{Name: n}
		}
	}
	return out, nil
}

// UnknownRuleError reports a rule name that matches no rule.
type UnknownRuleError struct{ Name string }

func (e *UnknownRuleError) Error() string {
	return fmt.Sprintf("vet: unknown rule %q (want an ID such as HP012 or a name such as undrained-body; list them with 'hotpath vet --rules list')", e.Name)
}
