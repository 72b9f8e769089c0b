package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestExportsQueryable: the stack declares the Glue database openvitals with one table per
// dataset of tables.json over the export bucket, partitioned by day with projection (no
// crawler), and an Athena workgroup writing its results to the same bucket, so that a query
// of openvitals.lab_runs needs no setup.
func TestExportsQueryable(t *testing.T) {
	o, tmpl := openvitals(t)
	tables, err := loadExportTables(defaultTablesFile)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.ResourceCountIs(jsii.String("AWS::Glue::Database"), jsii.Number(1))
	tmpl.HasResourceProperties(jsii.String("AWS::Glue::Database"), map[string]any{
		"DatabaseInput": assertions.Match_ObjectLike(&map[string]any{"Name": exportDatabase}),
	})
	tmpl.ResourceCountIs(jsii.String("AWS::Glue::Table"), jsii.Number(float64(len(tables))))
	for _, tab := range tables {
		tmpl.HasResourceProperties(jsii.String("AWS::Glue::Table"), map[string]any{
			"DatabaseName": exportDatabase,
			"TableInput": assertions.Match_ObjectLike(&map[string]any{
				"Name":          tab.Name,
				"PartitionKeys": []any{map[string]any{"Name": "day", "Type": "string", "Comment": "UTC day, yyyy-MM-dd"}},
				"Parameters": assertions.Match_ObjectLike(&map[string]any{
					"projection.enabled": "true", "projection.day.type": "date", "projection.day.format": "yyyy-MM-dd",
				}),
				"StorageDescriptor": assertions.Match_ObjectLike(&map[string]any{
					"SerdeInfo": map[string]any{"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
				}),
			}),
		})
	}
	tmpl.HasResourceProperties(jsii.String("AWS::Athena::WorkGroup"), map[string]any{
		"WorkGroupConfiguration": assertions.Match_ObjectLike(&map[string]any{
			"EnforceWorkGroupConfiguration": true,
			"ResultConfiguration":           assertions.Match_ObjectLike(&map[string]any{"OutputLocation": assertions.Match_AnyValue()}),
		}),
	})
	tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
		"LifecycleConfiguration": map[string]any{"Rules": assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(&map[string]any{"Id": "ExpireOldExports", "Prefix": exportPrefix, "ExpirationInDays": defaultExportRetentionDays}),
		})},
	})
	// The daily exports and retention passes each have their rule, at their hours, naming
	// their job.
	for id, want := range map[string]string{"ExportSchedule": "exports", "RetentionSchedule": "retention"} {
		rule := resources(tmpl, "AWS::Events::Rule")[logicalID(t, o.stack, "Schedules", id)]
		if rule == nil {
			t.Fatalf("no rule %s", id)
		}
		in, _ := json.Marshal(rule["Targets"])
		if !strings.Contains(string(in), `\"jobs\":[\"`+want+`\"]`) {
			t.Errorf("%s: targets %s do not name the job %s", id, in, want)
		}
	}
	if got := resources(tmpl, "AWS::Events::Rule")[logicalID(t, o.stack, "Schedules", "ExportSchedule")]["ScheduleExpression"]; got != "cron(0 1 * * ? *)" {
		t.Errorf("exports at %v, want 01:00 UTC", got)
	}
}
