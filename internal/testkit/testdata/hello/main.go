// Command hello is the package that testkit's Binary test builds.
package main

import "fmt"

func main() { fmt.Println("hello from a built binary") }
