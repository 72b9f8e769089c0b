package rehearsal

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/athena"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/openvitals/openvitals/internal/export"
)

// exportBucket is the physical name of the stack's export bucket ("" if it has none).
func (d *deployment) exportBucket() string {
	for id, r := range d.resources {
		if aws.ToString(r.ResourceType) == "AWS::S3::Bucket" && strings.HasPrefix(id, "ExportsBucket") {
			return aws.ToString(r.PhysicalResourceId)
		}
	}
	return ""
}

// checkExports checks what a query of the exports needs of the deployment, read back from the
// emulator's Glue and Athena: the database openvitals with a table per dataset of
// internal/export, each with the dataset's columns, partitioned by day with projection and
// located in the export bucket under exports/<dataset>/; an Athena workgroup writing its
// results into the export bucket; the bucket itself.
func (d *deployment) checkExports(t *testing.T) {
	bucket := d.exportBucket()
	if bucket == "" {
		t.Fatal("no export bucket")
	}
	if _, err := d.s3.HeadBucket(d.ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Errorf("export bucket %s: %v", bucket, err)
	}
	cfg, err := config.LoadDefaultConfig(d.ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := glue.NewFromConfig(cfg)
	if _, err := g.GetDatabase(d.ctx, &glue.GetDatabaseInput{Name: aws.String("openvitals")}); err != nil {
		t.Fatalf("Glue database openvitals: %v", err)
	}
	tables, err := export.Tables()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range tables {
		got, err := g.GetTable(d.ctx, &glue.GetTableInput{DatabaseName: aws.String("openvitals"), Name: aws.String(want.Name)})
		if err != nil {
			t.Errorf("Glue table openvitals.%s: %v", want.Name, err)
			continue
		}
		tab := got.Table
		var cols []string
		for _, c := range tab.StorageDescriptor.Columns {
			cols = append(cols, aws.ToString(c.Name)+" "+aws.ToString(c.Type))
		}
		var wantCols []string
		for _, c := range want.Columns {
			wantCols = append(wantCols, c.Name+" "+c.Type)
		}
		if !slices.Equal(cols, wantCols) {
			t.Errorf("openvitals.%s: columns %v, want %v", want.Name, cols, wantCols)
		}
		if len(tab.PartitionKeys) != 1 || aws.ToString(tab.PartitionKeys[0].Name) != "day" {
			t.Errorf("openvitals.%s: partition keys %+v, want day", want.Name, tab.PartitionKeys)
		}
		p := tab.Parameters
		loc := "s3://" + bucket + "/" + export.Prefix + want.Name + "/"
		if p["projection.enabled"] != "true" || p["projection.day.type"] != "date" || p["storage.location.template"] != loc+"day=${day}/" {
			t.Errorf("openvitals.%s: parameters %v, want day projected under %s", want.Name, p, loc)
		}
		if aws.ToString(tab.StorageDescriptor.Location) != loc {
			t.Errorf("openvitals.%s: location %s, want %s", want.Name, aws.ToString(tab.StorageDescriptor.Location), loc)
		}
	}
	a := athena.NewFromConfig(cfg)
	// The stack names its workgroup <stack>-exports.
	var workgroup string
	list, err := a.ListWorkGroups(d.ctx, &athena.ListWorkGroupsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list.WorkGroups {
		if strings.HasSuffix(aws.ToString(w.Name), "-exports") {
			workgroup = aws.ToString(w.Name)
		}
	}
	wg, err := a.GetWorkGroup(d.ctx, &athena.GetWorkGroupInput{WorkGroup: aws.String(workgroup)})
	if err != nil {
		t.Fatalf("Athena workgroup %q: %v", workgroup, err)
	}
	out := ""
	if c := wg.WorkGroup.Configuration; c != nil && c.ResultConfiguration != nil {
		out = aws.ToString(c.ResultConfiguration.OutputLocation)
	}
	if !strings.HasPrefix(out, "s3://"+bucket+"/") {
		t.Errorf("Athena workgroup %s: results to %q, want the export bucket %s", workgroup, out, bucket)
	}
}
