package runrecord

import (
	"fmt"
	"math"
)

// How the record writes a load level (a JobChange's stage, "8 VUs"), and the
// report with it: a level is a mean, so it is rounded for reading.

// LevelUnit names what a load level counts.
func LevelUnit(byRate bool) string {
	if byRate {
		return "req/s"
	}
	return "VUs"
}

// RoundLevel rounds a mean level for reading: whole VUs, rates to 0.1.
func RoundLevel(v float64) float64 {
	if v >= 10 {
		return math.Round(v)
	}
	return math.Round(v*10) / 10
}

// FormatConc writes a level: whole numbers without a decimal, others to 0.1.
func FormatConc(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
