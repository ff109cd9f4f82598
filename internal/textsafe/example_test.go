package textsafe_test

import (
	"fmt"

	"github.com/agentapp/agentapp/internal/textsafe"
)

func ExampleEscape() {
	// A tool name from a hostile server that would show as "refund_pay"
	// while it is stored the other way round, and one that retitles the
	// terminal window.
	fmt.Println(textsafe.Escape("refund\u202eyap_"))
	fmt.Println(textsafe.Escape("lookup\x1b]0;owned\x07"))
	fmt.Println(textsafe.Escape("订单状态\n第二行"))
	// Output:
	// refund\u202eyap_
	// lookup\x1b]0;owned\x07
	// 订单状态\n第二行
}

func ExamplePreview() {
	fmt.Println(textsafe.Preview(`{"orderId":"A-1024","note":"请尽快发货"}`, 20))
	// Output:
	// {"orderId":"A-1024",…(+15 chars, 35 total)
}
