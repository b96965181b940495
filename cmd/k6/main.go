// Command k6 is k6 with the k6/x/llmstream extension compiled in: what
// `xk6 build --with github.com/llmstream/xk6-llmstream=.` would generate.
package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "github.com/llmstream/xk6-llmstream" // registers k6/x/llmstream
)

func main() {
	k6cmd.Execute()
}
