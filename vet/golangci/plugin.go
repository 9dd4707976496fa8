// Package golangci registers hotpath vet as a golangci-lint v2 module
// plugin named "hotpath". Build a custom golangci-lint with it
// (.custom-gcl.yml):
//
//	version: v2.1.0
//	plugins:
//	  - module: github.com/hotpathhq/hotpath/vet/golangci
//	    path: ./vet/golangci   # or version: vX.Y.Z
//
// and enable it in .golangci.yml:
//
//	linters:
//	  enable: [hotpath]
//	  settings:
//	    custom:
//	      hotpath:
//	        type: module
//	        description: net/http anti-patterns (hotpath vet)
//	        settings:
//	          rules: [HP001, undrained-body]   # optional; default: every rule on by default
//
// HP015 unclosed-body is off by default (bodyclose, a golangci-lint linter,
// covers it): list it in rules to run it.
package golangci

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet"
)

func init() { register.Plugin("hotpath", New) }

// Settings are the plugin's settings from .golangci.yml.
type Settings struct {
	// Rules lists rule IDs or names to run; empty runs every rule that is
	// on by default (all but HP015).
	Rules []string `json:"rules"`
}

// Plugin is the hotpath linter plugin.
type Plugin struct{ settings Settings }

// New decodes the settings and returns the plugin; an unknown rule name is
// an error.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, err
	}
	if _, err := vet.Select(s.Rules); err != nil {
		return nil, err
	}
	return &Plugin{settings: s}, nil
}

// BuildAnalyzers returns the selected rules' analyzers.
func (p *Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	checks, err := vet.Select(p.settings.Rules)
	if err != nil {
		return nil, err
	}
	out := make([]*analysis.Analyzer, 0, len(checks))
	for _, c := range checks {
		out = append(out, c.Analyzer)
	}
	return out, nil
}

// GetLoadMode asks for type information: every rule needs it.
func (p *Plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
