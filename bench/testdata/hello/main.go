// Command hello is the start-up baseline of bench's BenchmarkStartup: a
// Go hello-world built with the same toolchain and flags as cursorkit.
package main

import "fmt"

func main() { fmt.Println("hello") }
