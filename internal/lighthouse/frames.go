package lighthouse

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"slices"

	"golang.org/x/image/draw"

	"github.com/openvitals/openvitals/internal/model"
)

// FramesPath is where an audit writes the load's visual frames from the trace's screenshots,
// beside the report at reportPath (see the runner's visualFrames).
func FramesPath(reportPath string) string { return reportPath + ".frames.json" }

// FrameWidth is the widest a stored frame is, in pixels: a filmstrip shows frames side by side,
// and a frame of the viewport's width would be ten times the bytes for nothing.
const FrameWidth = 240

// frameQuality is the stored frames' JPEG quality: a few KB a frame, the text still legible
// at FrameWidth.
const frameQuality = 70

// traceFrames is what the runner wrote of the trace's screenshots.
type traceFrames struct {
	SpeedIndex float64 `json:"speedIndex"`
	Frames     []struct {
		Time     float64 `json:"time"`
		Complete float64 `json:"complete"`
		JPEG     string  `json:"jpeg"`
	} `json:"frames"`
}

// traceFilmstrip makes the filmstrip of every distinct frame of the load, from navigation start
// (the first blank), each with its time and visual completeness, scaled to FrameWidth and
// stored once; and the load's Speed Index from those frames.
func (o *Diagnosis) traceFilmstrip(raw []byte) error {
	var in traceFrames
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("lighthouse: the load's frames: %w", err)
	}
	for _, f := range in.Frames {
		data, err := base64.StdEncoding.DecodeString(f.JPEG)
		if err != nil {
			return fmt.Errorf("lighthouse: a frame at %v ms: %w", f.Time, err)
		}
		small, err := scaledJPEG(data, FrameWidth)
		if err != nil {
			return fmt.Errorf("lighthouse: a frame at %v ms: %w", f.Time, err)
		}
		complete := round1(f.Complete)
		name := imageName(small, ".jpg")
		if n := len(o.Diagnostics.Filmstrip); n > 0 && (o.Diagnostics.Filmstrip[n-1].Image == name || complete == 0) {
			// The same picture as the frame before, or another blank one (none of the final
			// page's colours yet: a white page, a scrollbar drawn): nothing a person would see.
			continue
		}
		o.addImageData(small, "image/jpeg", ".jpg")
		o.Diagnostics.Filmstrip = append(o.Diagnostics.Filmstrip, model.Frame{Time: round1(f.Time), Complete: &complete, Image: name})
	}
	if len(in.Frames) > 0 && in.SpeedIndex > 0 {
		si := round1(in.SpeedIndex)
		o.Diagnostics.SpeedIndex = &si
	}
	return nil
}

// scaledJPEG is a JPEG image no wider than width, re-encoded at frameQuality.
func scaledJPEG(data []byte, width int) ([]byte, error) {
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	dst := image.Image(src)
	if b.Dx() > width {
		h := max(1, b.Dy()*width/b.Dx())
		scaled := image.NewRGBA(image.Rect(0, 0, width, h))
		draw.ApproxBiLinear.Scale(scaled, scaled.Bounds(), src, b, draw.Src, nil)
		dst = scaled
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: frameQuality}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// imageName names an image by its content.
func imageName(data []byte, ext string) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]) + ext
}

// addImageData stores an image once, named by its content, and returns its name.
func (o *Diagnosis) addImageData(data []byte, contentType, ext string) string {
	name := imageName(data, ext)
	if !slices.ContainsFunc(o.Images, func(i model.Image) bool { return i.Name == name }) {
		o.Images = append(o.Images, model.Image{Name: name, ContentType: contentType, Data: data})
	}
	return name
}
