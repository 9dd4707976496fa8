package lab_test

import (
	"context"
	"fmt"
	"os"

	"github.com/hotpathhq/hotpath/internal/lab"
)

// Run two experiments with a short budget and write the HTML report.
// (Not run as a test: its figures depend on the machine.)
func ExampleRun() {
	exps, err := lab.Select([]string{"000-04", "004-headers"})
	if err != nil {
		panic(err)
	}
	rep := lab.Run(context.Background(), exps, lab.Options{Budget: lab.Quick, Progress: os.Stderr})
	for _, r := range rep.Results {
		fmt.Printf("%s: %s: %s\n", r.ID, r.Verdict, r.Why)
	}
	f, err := os.Create("index.html")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	lab.WriteHTML(f, rep)
}

// Judge turns a claimed and a measured ratio into a verdict.
func ExampleJudge() {
	v, why := lab.Judge(lab.Claim{Ratio: 70}, lab.Stat{Median: 14.8, Lo: 12.4, Hi: 17.2})
	fmt.Println(v)
	fmt.Println(why)
	v, why = lab.Judge(lab.Claim{Ratio: 0.91}, lab.Stat{Median: 0.93, Lo: 0.72, Hi: 1.00})
	fmt.Println(v)
	fmt.Println(why)
	// Output:
	// smaller than claimed
	// measured 14.8× (CI 12.4×–17.2×) vs claimed 70.0×: same direction, the whole CI below the claim's band
	// inconclusive
	// measured 0.93× (CI 0.72×–1.00×) vs claimed 0.91×: the CI spans both 1× and the claim's band; more runs would tell
}
