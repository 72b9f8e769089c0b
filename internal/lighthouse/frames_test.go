package lighthouse

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

func jpegOf(t *testing.T, w, h int, c color.Color) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// The trace's frames become the filmstrip: scaled to FrameWidth, a frame that looks like the
// one before left out (a white first paint after the blank frame), and so is another blank
// one (0 % complete), each image stored once.
func TestTraceFilmstrip(t *testing.T) {
	white, blue := jpegOf(t, 800, 600, color.White), jpegOf(t, 800, 600, color.RGBA{0, 0, 255, 255})
	grey := jpegOf(t, 800, 600, color.RGBA{250, 250, 250, 255})
	in, err := json.Marshal(map[string]any{"speedIndex": 412.34, "frames": []map[string]any{
		{"time": 0, "complete": 0, "jpeg": white},
		{"time": 95, "complete": 0, "jpeg": white},
		{"time": 120, "complete": 0, "jpeg": grey},
		{"time": 300.04, "complete": 100, "jpeg": blue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var o Diagnosis
	if err := o.traceFilmstrip(in); err != nil {
		t.Fatal(err)
	}
	f := o.Diagnostics.Filmstrip
	if len(f) != 2 || f[0].Time != 0 || *f[0].Complete != 0 || f[1].Time != 300 || *f[1].Complete != 100 || f[0].Image == f[1].Image {
		t.Fatalf("filmstrip %+v, want the blank frame at 0 and the blue one at 300 ms", f)
	}
	if len(o.Images) != 2 || o.Diagnostics.SpeedIndex == nil || *o.Diagnostics.SpeedIndex != 412.3 {
		t.Errorf("%d images, Speed Index %v; want 2 and 412.3", len(o.Images), o.Diagnostics.SpeedIndex)
	}
	for _, im := range o.Images {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(im.Data))
		if err != nil || cfg.Width != FrameWidth || cfg.Height != 180 {
			t.Errorf("image %s: %dx%d (%v), want %dx180", im.Name, cfg.Width, cfg.Height, err, FrameWidth)
		}
	}
	if err := o.traceFilmstrip([]byte(`{"frames":[{"time":1,"jpeg":"bm90IGEganBlZw=="}]}`)); err == nil {
		t.Error("a frame that is no JPEG was read")
	}
}
