package dataset

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withImages(t *testing.T, o ImageOptions) *Dataset {
	t.Helper()
	d, err := Synthetic(SyntheticOptions{Seed: 3, Mix: map[string]float64{"short": 1}, Variants: 4})
	require.NoError(t, err)
	require.NoError(t, d.withImages(o, 3))
	return d
}

func decoded(t *testing.T, im Image) image.Image {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(im.Base64)
	require.NoError(t, err)
	assert.Len(t, raw, im.Bytes)
	img, _, err := image.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	return img
}

func TestSyntheticImagesHaveTheirSizeAndDifferInPixelsOnEveryDraw(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"jpeg", "png"} {
		d := withImages(t, ImageOptions{Count: 2, Width: Range{64, 96}, Height: Range{40, 40}, Format: format})
		a, b := d.Draw(0), d.Draw(4) // 4 variants: draw 4 is draw 0's item again
		require.Equal(t, a.ID, b.ID)
		require.Len(t, a.Images, 2)
		for j := range a.Images {
			im := a.Images[j]
			assert.Equal(t, "image/"+format, im.MIME)
			assert.Equal(t, 40, im.Height)
			assert.True(t, im.Width >= 64 && im.Width <= 96, im.Width)
			img := decoded(t, im)
			assert.Equal(t, image.Rect(0, 0, im.Width, im.Height), img.Bounds())
			other := b.Images[j]
			assert.Equal(t, im.Width, other.Width, "the size is the item's")
			assert.NotEqual(t, im.Base64, other.Base64, "%s: bytes differ per draw", format)
			assert.NotEqual(t, pixels(decoded(t, other)), pixels(img), "%s: so do the decoded pixels", format)
		}
		assert.Equal(t, uint64(4), d.ImagesAttached())
	}
}

func pixels(img image.Image) []uint32 {
	var out []uint32
	b := img.Bounds()
	for y := b.Min.Y; y < min(b.Max.Y, 8); y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			out = append(out, r^g<<8^bl<<16)
		}
	}
	return out
}

func TestRepeatedImagesAreTheSameBytesOnEveryDraw(t *testing.T) {
	t.Parallel()
	d := withImages(t, ImageOptions{Width: Range{32, 32}, Height: Range{32, 32}, Repeat: true})
	a, b, c := d.Draw(0), d.Draw(4), d.Draw(1)
	assert.Equal(t, a.Images[0].Base64, b.Images[0].Base64)
	assert.NotEqual(t, a.Images[0].Base64, c.Images[0].Base64, "another item, another image")
	assert.Equal(t, 512, withImages(t, ImageOptions{Format: "png", Repeat: true}).Draw(0).Images[0].Width, "512 px by default")
}

func TestAFractionOfItemsCarriesImages(t *testing.T) {
	t.Parallel()
	d, err := Synthetic(SyntheticOptions{Seed: 1, Mix: map[string]float64{"short": 1}, Variants: 200})
	require.NoError(t, err)
	require.NoError(t, d.withImages(ImageOptions{Width: Range{8, 8}, Height: Range{8, 8}, Fraction: 0.25}, 1))
	with := 0
	for i := range 200 {
		it := d.Draw(uint64(i))
		if len(it.Images) > 0 {
			with++
		}
		assert.Equal(t, len(it.Images) > 0, len(d.Draw(uint64(i+200)).Images) > 0, "decided per item")
	}
	assert.InDelta(t, 50, with, 20)
}

func TestImageFilesAreSentInTurnWithTheirType(t *testing.T) {
	t.Parallel()
	var pngFile bytes.Buffer
	require.NoError(t, png.Encode(&pngFile, image.NewGray(image.Rect(0, 0, 3, 2))))
	webp := []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")
	d := withImages(t, ImageOptions{Dir: "pics", Files: []ImageFile{{"a.png", pngFile.Bytes()}, {"b.webp", webp}}})
	a, b, c := d.Draw(0), d.Draw(1), d.Draw(2)
	assert.Equal(t, Image{MIME: "image/png", Width: 3, Height: 2, Bytes: pngFile.Len(),
		Base64: base64.StdEncoding.EncodeToString(pngFile.Bytes()), File: "a.png"}, a.Images[0])
	assert.Equal(t, "image/webp", b.Images[0].MIME)
	assert.Zero(t, b.Images[0].Width, "a size Go cannot read is unknown")
	assert.Equal(t, "a.png", c.Images[0].File)
}

func TestBadImageOptionsAreErrorsNamingTheOption(t *testing.T) {
	t.Parallel()
	d, err := Synthetic(SyntheticOptions{Seed: 1, Mix: map[string]float64{"short": 1}, Variants: 1})
	require.NoError(t, err)
	for _, c := range []struct {
		o    ImageOptions
		want string
	}{
		{ImageOptions{Count: 65}, "images.count"},
		{ImageOptions{Width: Range{0, 9000}}, "images.width"},
		{ImageOptions{Height: Range{20, 10}}, "images.height"},
		{ImageOptions{Format: "gif"}, "images.format"},
		{ImageOptions{Quality: 101}, "images.quality"},
		{ImageOptions{Fraction: 2}, "images.fraction"},
		{ImageOptions{Dir: "empty"}, "images.dir empty"},
		{ImageOptions{Files: []ImageFile{{"x.txt", []byte("hello")}}}, "x.txt is not a PNG"},
		{ImageOptions{Files: []ImageFile{{"e.png", nil}}}, "e.png is empty"},
	} {
		err := d.withImages(c.o, 1)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
	require.NoError(t, d.withImages(ImageOptions{}, 1), "no images asked for")
	assert.Empty(t, d.Draw(0).Images)
}
