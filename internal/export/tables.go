package export

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Column is a column of a dataset's Glue table: its name and Hive type.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Table is a dataset's Glue table: its name and its columns, in the order of its rows' fields.
// The day is the table's partition key, not a column of its files.
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
}

// rowTypes are the row type of each dataset.
var rowTypes = map[string]reflect.Type{
	LabRuns:     reflect.TypeFor[LabRun](),
	UX:          reflect.TypeFor[UXRecord](),
	Events:      reflect.TypeFor[EventRow](),
	Incidents:   reflect.TypeFor[IncidentRow](),
	Diagnostics: reflect.TypeFor[DiagnosticsRow](),
	RUMDaily:    reflect.TypeFor[RUMDailyRow](),
}

// Tables are the Glue tables of the datasets, derived from their row types, so that the
// tables the CDK stack declares (from tables.json, generated from them) read what the files
// hold.
func Tables() ([]Table, error) {
	var out []Table
	for _, ds := range Datasets {
		t := rowTypes[ds]
		tab := Table{Name: ds}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
			typ, err := hiveType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", ds, name, err)
			}
			tab.Columns = append(tab.Columns, Column{Name: name, Type: typ})
		}
		out = append(out, tab)
	}
	return out, nil
}

func hiveType(t reflect.Type) (string, error) {
	if t == reflect.TypeFor[time.Time]() {
		return "timestamp", nil
	}
	switch t.Kind() {
	case reflect.Pointer: // an optional value: a column like any other, its nulls null
		return hiveType(t.Elem())
	case reflect.String:
		return "string", nil
	case reflect.Int32:
		return "int", nil
	case reflect.Int64:
		return "bigint", nil
	case reflect.Float64:
		return "double", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Slice:
		e, err := hiveType(t.Elem())
		return "array<" + e + ">", err
	case reflect.Map:
		k, err := hiveType(t.Key())
		if err != nil {
			return "", err
		}
		v, err := hiveType(t.Elem())
		return "map<" + k + "," + v + ">", err
	}
	return "", fmt.Errorf("no Hive type for %s", t)
}
