package vet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteText writes one line per finding, "file:line:col: [HP012
// undrained-body] message", and a summary line to w.
func (r *Result) WriteText(w io.Writer) error {
	for _, f := range r.Findings {
		fix := ""
		if f.Fixable {
			fix = " (fix available)"
		}
		if _, err := fmt.Fprintf(w, "%s:%d:%d: %s %s%s\n", f.File, f.Line, f.Column, Rule{ID: f.RuleID, Name: f.Rule}.Tag(), f.Message, fix); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d finding(s) in %d package(s), %d rule(s) run\n", len(r.Findings), r.Packages, len(r.Checks))
	return err
}

// WriteJSON writes the findings as a JSON object {"findings": [...]}.
func (r *Result) WriteJSON(w io.Writer) error {
	findings := r.Findings
	if findings == nil {
		findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Findings []Finding `json:"findings"`
		Packages int       `json:"packages"`
	}{findings, r.Packages})
}

// SARIF 2.1.0, the subset GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	ShortDescription sarifText      `json:"shortDescription"`
	FullDescription  sarifText      `json:"fullDescription"`
	Help             sarifText      `json:"help"`
	HelpURI          string         `json:"helpUri"`
	Properties       map[string]any `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine   int `json:"startLine"`
			StartColumn int `json:"startColumn"`
		} `json:"region"`
	} `json:"physicalLocation"`
}

// WriteSARIF writes a SARIF 2.1.0 log: one run, rules[] with one entry per
// rule (ID, name, help text, help URI, catalog exercise), and one result per
// finding with a ruleId and a partialFingerprints entry that survives line
// moves (rule, file and message, numbered when repeated).
func (r *Result) WriteSARIF(w io.Writer) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{
		Name:           "hotpath-vet",
		InformationURI: "https://github.com/hotpathhq/hotpath/blob/main/vet/README.md",
		Rules:          []sarifRule{},
	}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, c := range r.Checks {
		index[c.Rule.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID:               c.Rule.ID,
			Name:             c.Rule.Name,
			ShortDescription: sarifText{c.Rule.Summary},
			FullDescription:  sarifText{c.Rule.Help},
			Help:             sarifText{c.Rule.Doc()},
			HelpURI:          c.Rule.URL(),
			Properties: map[string]any{
				"tags":      []string{"performance", "net/http", "catalog-" + strconv.Itoa(c.Rule.Exercise)},
				"precision": "high",
				"lab":       c.Rule.Lab(),
			},
		})
	}
	repeat := map[string]int{}
	for _, f := range r.Findings {
		var loc sarifLocation
		loc.PhysicalLocation.ArtifactLocation.URI = f.File
		loc.PhysicalLocation.Region.StartLine = f.Line
		loc.PhysicalLocation.Region.StartColumn = f.Column
		key := f.RuleID + "\x00" + f.File + "\x00" + f.Message
		repeat[key]++
		sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(repeat[key])))
		run.Results = append(run.Results, sarifResult{
			RuleID:              f.RuleID,
			RuleIndex:           index[f.RuleID],
			Level:               "warning",
			Message:             sarifText{f.Message},
			Locations:           []sarifLocation{loc},
			PartialFingerprints: map[string]string{"hotpathFinding/v1": hex.EncodeToString(sum[:16])},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	})
}
