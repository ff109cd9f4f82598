package compose

import (
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/google/go-cmp/cmp"
)

func TestSourcesCitationOrder(t *testing.T) {
	out := `{"hits":[{"no":1,"docId":"a","title":"A"},{"no":2,"docId":"b","title":"B"},{"no":3,"docId":"c","title":"C"}]}`
	got := Sources("见 [3] 和 [1]，以及 [9]，再见 [3]。", []string{`{"orderId":"A-1024"}`, "not json", out})
	want := []host.Source{{No: 3, DocID: "c", Title: "C"}, {No: 1, DocID: "a", Title: "A"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sources (-want +got), want citation order, once each, only hits:\n%s", diff)
	}
	if got := Sources("no citations", []string{out}); got == nil || len(got) != 0 {
		t.Errorf("Sources without citations = %#v, want an empty list", got)
	}
	b, _ := json.Marshal(want[0])
	if string(b) != `{"no":3,"docId":"c","title":"C"}` {
		t.Errorf("a Source is written as %s", b)
	}
}

// Two passages of one document, cited as [1] and [3], make one entry: the
// document at its first citation, with the other number in Also, so that
// [3] in the answer still finds it.
func TestSourcesOneDocumentOnce(t *testing.T) {
	out := `{"hits":[{"no":1,"docId":"hr","title":"HR"},{"no":2,"docId":"vpn","title":"VPN"},{"no":3,"docId":"hr","title":"HR"}]}`
	got := Sources("加班费按 1.5 倍计[1]。周末 2 倍[3]。VPN 闲置 30 分钟断开[2]。再说一次[1]。", []string{out})
	want := []host.Source{{No: 1, DocID: "hr", Title: "HR", Also: []int{3}}, {No: 2, DocID: "vpn", Title: "VPN"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(got[0])
	if string(b) != `{"no":1,"docId":"hr","title":"HR","also":[3]}` {
		t.Errorf("the entry is written as %s", b)
	}
}
