package awsmeter_test

import (
	"testing"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/awsmeter"
)

func TestItemBytes(t *testing.T) {
	item := map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "abcd"},                 // 2 + 4
		"n":  &ddbtypes.AttributeValueMemberN{Value: "12345"},                // 1 + 3 + 1
		"ok": &ddbtypes.AttributeValueMemberBOOL{Value: true},                // 2 + 1
		"ss": &ddbtypes.AttributeValueMemberSS{Value: []string{"a", "bc"}},   // 2 + 3
		"ns": &ddbtypes.AttributeValueMemberNS{Value: []string{"1", "22"}},   // 2 + 2 + 2
		"bs": &ddbtypes.AttributeValueMemberBS{Value: [][]byte{{1, 2}, {3}}}, // 2 + 3
		"l": &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{ // 1 + 3 + (1+1) + (2+1)
			&ddbtypes.AttributeValueMemberNULL{Value: true},
			&ddbtypes.AttributeValueMemberB{Value: []byte{1, 2}},
		}},
		"m": &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{ // 1 + 3 + (1+1+1)
			"x": &ddbtypes.AttributeValueMemberS{Value: "y"},
		}},
	}
	want := 6 + 5 + 3 + 5 + 6 + 5 + 9 + 7
	if got := awsmeter.ItemBytes(item); got != want {
		t.Errorf("ItemBytes = %d, want %d", got, want)
	}
}
