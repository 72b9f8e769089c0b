package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsathena"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsglue"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The Glue database the exports' tables are in, and the prefixes of the export bucket: the
// exports (internal/export.Prefix) and Athena's query results.
const (
	exportDatabase       = "openvitals"
	exportPrefix         = "exports/"
	athenaResultsPrefix  = "athena-results/"
	athenaResultsDays    = 7
	exportProjectionFrom = "2024-01-01"
)

// defaultTablesFile is the exports' tables the main module keeps generated from its row
// types (internal/export, TestTablesFile), relative to infra/.
const defaultTablesFile = "../internal/export/tables.json"

// exportTable is a Glue table of tables.json.
type exportTable struct {
	Name    string `json:"name"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
}

func loadExportTables(path string) ([]exportTable, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Clean(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the exports' tables: %w", err)
	}
	var tables []exportTable
	if err := json.Unmarshal(b, &tables); err != nil || len(tables) == 0 {
		return nil, fmt.Errorf("the exports' tables %s: no tables (%v)", path, err)
	}
	return tables, nil
}

// exports holds the export bucket and what queries it: the Glue database and its tables, and
// the Athena workgroup whose results go to the same bucket.
type exports struct {
	bucket    awss3.Bucket
	database  awsglue.CfnDatabase
	workgroup awsathena.CfnWorkGroup
}

// newExports creates under scope/id the export bucket (its exports expire after
// retentionDays, Athena's results after athenaResultsDays), the Glue database openvitals with
// a table per dataset over the bucket's exports, partitioned by day with partition projection
// (no crawler, no partition to add: a day's files are found as soon as they are written), and
// an Athena workgroup that writes its results to the bucket.
func newExports(scope constructs.Construct, id string, retentionDays int, tables []exportTable) *exports {
	c := constructs.NewConstruct(scope, jsii.String(id))
	// The customer's own copy of its data: kept when the stack goes.
	bucket := newRetainedBucket(c, "Bucket",
		expiryRule{id: "ExpireOldExports", prefix: exportPrefix, days: retentionDays},
		expiryRule{id: "ExpireAthenaResults", prefix: athenaResultsPrefix, days: athenaResultsDays})
	database := awsglue.NewCfnDatabase(c, jsii.String("Database"), &awsglue.CfnDatabaseProps{
		CatalogId: awscdk.Stack_Of(c).Account(),
		DatabaseInput: &awsglue.CfnDatabase_DatabaseInputProperty{
			Name:        jsii.String(exportDatabase),
			Description: jsii.String("openvitals: the daily Parquet exports of every website, one table per dataset"),
		},
	})
	for _, t := range tables {
		newExportTable(c, bucket, t).Node().AddDependency(database)
	}
	return &exports{bucket: bucket, database: database, workgroup: newExportWorkgroup(c, bucket)}
}

// newExportTable creates the Glue table of t over its exports in bucket. Projected days run
// from exportProjectionFrom to today: Athena computes a query's partitions from its day
// predicate, and a day without files reads nothing.
func newExportTable(c constructs.Construct, bucket awss3.Bucket, t exportTable) awsglue.CfnTable {
	location := awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3://"), bucket.BucketName(), jsii.String("/" + exportPrefix + t.Name + "/")})
	var columns []interface{}
	for _, col := range t.Columns {
		columns = append(columns, &awsglue.CfnTable_ColumnProperty{Name: jsii.String(col.Name), Type: jsii.String(col.Type)})
	}
	return awsglue.NewCfnTable(c, jsii.String("Table_"+t.Name), &awsglue.CfnTableProps{
		CatalogId:    awscdk.Stack_Of(c).Account(),
		DatabaseName: jsii.String(exportDatabase),
		TableInput: &awsglue.CfnTable_TableInputProperty{
			Name:        jsii.String(t.Name),
			Description: jsii.String("openvitals export " + t.Name + ": a file per website and day"),
			TableType:   jsii.String("EXTERNAL_TABLE"),
			PartitionKeys: &[]interface{}{
				&awsglue.CfnTable_ColumnProperty{Name: jsii.String("day"), Type: jsii.String("string"), Comment: jsii.String("UTC day, yyyy-MM-dd")},
			},
			Parameters: map[string]*string{
				"classification":               jsii.String("parquet"),
				"EXTERNAL":                     jsii.String("TRUE"),
				"projection.enabled":           jsii.String("true"),
				"projection.day.type":          jsii.String("date"),
				"projection.day.format":        jsii.String("yyyy-MM-dd"),
				"projection.day.range":         jsii.String(exportProjectionFrom + ",NOW"),
				"projection.day.interval":      jsii.String("1"),
				"projection.day.interval.unit": jsii.String("DAYS"),
				"storage.location.template":    awscdk.Fn_Join(jsii.String(""), &[]*string{location, jsii.String("day=${day}/")}),
			},
			StorageDescriptor: &awsglue.CfnTable_StorageDescriptorProperty{
				Columns:      &columns,
				Location:     location,
				InputFormat:  jsii.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"),
				OutputFormat: jsii.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
				SerdeInfo: &awsglue.CfnTable_SerdeInfoProperty{
					SerializationLibrary: jsii.String("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
				},
			},
		},
	})
}

// newExportWorkgroup creates the Athena workgroup that queries the exports and writes its
// results to bucket.
func newExportWorkgroup(c constructs.Construct, bucket awss3.Bucket) awsathena.CfnWorkGroup {
	stack := awscdk.Stack_Of(c)
	return awsathena.NewCfnWorkGroup(c, jsii.String("Workgroup"), &awsathena.CfnWorkGroupProps{
		Name:                  awscdk.Fn_Join(jsii.String("-"), &[]*string{stack.StackName(), jsii.String("exports")}),
		Description:           jsii.String("openvitals: queries of the daily Parquet exports (database " + exportDatabase + ")"),
		RecursiveDeleteOption: jsii.Bool(true),
		WorkGroupConfiguration: &awsathena.CfnWorkGroup_WorkGroupConfigurationProperty{
			EnforceWorkGroupConfiguration: jsii.Bool(true),
			ResultConfiguration: &awsathena.CfnWorkGroup_ResultConfigurationProperty{
				OutputLocation: awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("s3://"), bucket.BucketName(), jsii.String("/" + athenaResultsPrefix)}),
				EncryptionConfiguration: &awsathena.CfnWorkGroup_EncryptionConfigurationProperty{
					EncryptionOption: jsii.String("SSE_S3"),
				},
			},
			// A runaway query stops at 10 GB scanned ($0.05).
			BytesScannedCutoffPerQuery: jsii.Number(10 << 30),
		},
	})
}

// setRetentionBounds gives fn the days the stack's lifecycle rules keep reports, real-user
// data and exports: the most a website's retention may be (the websites API checks it, the
// purge worker applies it).
func setRetentionBounds(fn awslambda.Function, s settings) {
	for name, days := range map[string]int{
		"OPENVITALS_REPORT_RETENTION_DAYS": s.reportRetentionDays,
		"OPENVITALS_RUM_RETENTION_DAYS":    s.rumRetentionDays,
		"OPENVITALS_EXPORT_RETENTION_DAYS": s.exportRetentionDays,
	} {
		fn.AddEnvironment(jsii.String(name), jsii.String(strconv.Itoa(days)), nil)
	}
}
