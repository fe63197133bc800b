package web

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// Upload limits.
const (
	MaxUpload       = 64 << 20  // bytes of a whole upload request
	maxUnpacked     = 256 << 20 // bytes unpacked from archives, against zip bombs
	maxArchiveFiles = 10000
)

// uploadEngine registers an engine from multipart/form-data: a "meta" part with
// the JSON of POST /api/engines and one or more "file" parts (single files,
// .zip, .tar.gz/.tgz), unpacked into the engine's own directory, which becomes
// its working directory. Nothing is kept unless everything is valid. save
// stores the engine (registered or replacing one) with its files' hash and
// returns the id and status to answer with.
func (s *Server) uploadEngine(w http.ResponseWriter, r *http.Request, fill func(*engineRequest), save engineSaver) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	root := filepath.Join(s.DataDir, "engines")
	if err := os.MkdirAll(root, 0o755); err != nil {
		s.writeError(w, r, err)
		return
	}
	tmp, err := os.MkdirTemp(root, ".upload-")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	keep := ""
	defer func() {
		if keep == "" {
			os.RemoveAll(tmp)
		}
	}()
	req, files, err := readUpload(r, tmp)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.admitted(r, req, fill)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if files == 0 {
		s.writeError(w, r, errInvalid("file", "file: no file in the upload"))
		return
	}
	dir := filepath.Join(root, dirName(e.Name))
	// A sandboxed engine runs as another user (nobody): its directory must
	// be readable, as its files are (writeFile's modes).
	if err := os.Chmod(tmp, 0o755); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := os.Rename(tmp, dir); err != nil {
		s.writeError(w, r, err)
		return
	}
	e.Dir = dir
	hash, err := filesHash(dir)
	if err != nil {
		os.RemoveAll(dir)
		s.writeError(w, r, err)
		return
	}
	status, err := save(&e, hash)
	if err != nil {
		os.RemoveAll(dir)
		s.writeError(w, r, err)
		return
	}
	keep = dir
	s.log().Info("engine uploaded", "engine", e.Name, "id", e.ID, "dir", dir, "files", files)
	s.writeEngine(w, r, status, e.ID)
}

// engineSaver stores an engine received from a request, given the hash of
// its files ("" when none), sets its ID, and returns the answer's status.
type engineSaver func(e *engines.Engine, filesHash string) (int, error)

// filesHash is the hex SHA-256 of an engine directory's files: each regular
// file's path, mode and contents, in name order, so that the same upload
// always gives the same hash.
func filesHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", filepath.ToSlash(rel), info.Mode().Perm(), info.Size())
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dirName is a directory name for an engine: its name made safe, and a random
// suffix so that a re-registered name never meets an old directory.
func dirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return strings.Trim(b.String(), ".") + "-" + hex.EncodeToString(rnd[:])
}

// readUpload reads the parts of an upload, unpacking files into dir.
func readUpload(r *http.Request, dir string) (*engineRequest, int, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, 0, errInvalid("body", "multipart: "+err.Error())
	}
	var (
		req   *engineRequest
		files int
		room  = int64(maxUnpacked)
	)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, uploadError(err)
		}
		switch part.FormName() {
		case "meta":
			var m engineRequest
			if err := decodeJSON(io.LimitReader(part, maxJSON), &m); err != nil {
				var e *games.Error
				if errors.As(err, &e) && e.Field == "body" {
					e.Field = "meta"
					e.Message = "meta: " + e.Message
				}
				return nil, 0, err
			}
			req = &m
		case "file":
			n, err := unpack(part, part.FileName(), dir, &room)
			if err != nil {
				return nil, 0, uploadError(err)
			}
			files += n
		default:
			return nil, 0, errInvalid(part.FormName(), fmt.Sprintf("unknown part %q: want meta and file", part.FormName()))
		}
		part.Close()
	}
	if req == nil {
		return nil, 0, errInvalid("meta", `meta: missing; send the engine's JSON in a part named "meta"`)
	}
	return req, files, nil
}

func uploadError(err error) error {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return &games.Error{Code: games.ETooLarge, Message: fmt.Sprintf("file: the upload is over %d MiB", MaxUpload>>20), Field: "file"}
	}
	var e *games.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errInvalid("body", "body: the upload did not arrive in time (is Content-Length longer than the body?)")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Writing the engine's files failed. A full disk or a failing one is
		// the server's problem (the answer says so, the log has the path);
		// anything else comes of the upload itself (a file where its
		// archive wants a directory): named without the server's path.
		switch {
		case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS):
			return err
		}
		return errInvalid("file", fmt.Sprintf("file: %s %s: %v", pe.Op, filepath.Base(pe.Path), pe.Err))
	}
	return errInvalid("file", "file: "+err.Error())
}

// RemoveUploadLeftovers removes what uploads killed with the server left in
// the engines' directory (their temporary directories); serve calls it at
// start, before any upload can be under way.
func RemoveUploadLeftovers(enginesDir string) error {
	left, err := filepath.Glob(filepath.Join(enginesDir, ".upload-*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range left {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// unpack stores one uploaded file into dir: archives are extracted, anything
// else is kept as a single executable file. It returns the files written.
func unpack(r io.Reader, name, dir string, room *int64) (int, error) {
	base, err := safeName(name)
	if err != nil {
		return 0, err
	}
	lower := strings.ToLower(base)
	switch {
	case strings.HasSuffix(lower, ".zip"):
		// zip needs random access: spool it (bounded by the request limit).
		f, err := os.CreateTemp(dir, ".zip-")
		if err != nil {
			return 0, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		size, err := io.Copy(f, r)
		if err != nil {
			return 0, err
		}
		return unzip(f, size, base, dir, room)
	case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		return untar(r, base, dir, room)
	}
	if err := writeFile(filepath.Join(dir, base), r, 0o755, room); err != nil {
		return 0, err
	}
	return 1, nil
}

// safeName is the base name of an uploaded file, refusing names that are not
// plain file names.
func safeName(name string) (string, error) {
	if name == "" {
		return "", errInvalid("file", "file: a file part needs a file name")
	}
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if base == "." || base == ".." || base == "/" || strings.ContainsRune(base, 0) {
		return "", errInvalid("file", fmt.Sprintf("file: %q is not a file name", name))
	}
	if windowsNames {
		if err := windowsName(base); err != nil {
			return "", errInvalid("file", "file: "+err.Error())
		}
	}
	return base, nil
}

// entryPath checks an archive entry's path and returns where it goes in dir:
// no absolute paths, no "..", nothing outside the directory.
func entryPath(archive, name, dir string) (string, error) {
	clean := path.Clean(strings.ReplaceAll(name, `\`, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(clean, 0) || filepath.VolumeName(clean) != "" {
		return "", errInvalid("file", fmt.Sprintf("file: %s: entry %q escapes the engine's directory", archive, name))
	}
	if windowsNames && clean != "." {
		if err := windowsPath(clean); err != nil {
			return "", errInvalid("file", fmt.Sprintf("file: %s: entry %q: %v", archive, name, err))
		}
	}
	return filepath.Join(dir, filepath.FromSlash(clean)), nil
}

func writeFile(dst string, r io.Reader, mode fs.FileMode, room *int64) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errInvalid("file", fmt.Sprintf("file: %s is uploaded twice", filepath.Base(dst)))
		}
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, *room+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if *room -= n; *room < 0 {
		return &games.Error{Code: games.ETooLarge, Message: fmt.Sprintf("file: archives unpack to more than %d MiB", maxUnpacked>>20), Field: "file"}
	}
	return nil
}

// fileMode keeps the execute bits of an archived file and nothing else.
func fileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func unzip(f *os.File, size int64, archive, dir string, room *int64) (int, error) {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return 0, errInvalid("file", fmt.Sprintf("file: %s: not a zip archive: %v", archive, err))
	}
	if len(zr.File) > maxArchiveFiles {
		return 0, errInvalid("file", fmt.Sprintf("file: %s has more than %d entries", archive, maxArchiveFiles))
	}
	n := 0
	for _, zf := range zr.File {
		dst, err := entryPath(archive, zf.Name, dir)
		if err != nil {
			return 0, err
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return 0, err
			}
			continue
		case !mode.IsRegular():
			return 0, errInvalid("file", fmt.Sprintf("file: %s: entry %q is a %s, only files and directories are allowed", archive, zf.Name, kind(mode)))
		}
		rc, err := zf.Open()
		if err != nil {
			return 0, errInvalid("file", fmt.Sprintf("file: %s: %s: %v", archive, zf.Name, err))
		}
		err = writeFile(dst, rc, fileMode(mode), room)
		rc.Close()
		if err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, errInvalid("file", fmt.Sprintf("file: %s is an empty archive", archive))
	}
	return n, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

func untar(r io.Reader, archive, dir string, room *int64) (int, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, errInvalid("file", fmt.Sprintf("file: %s: not gzip-compressed: %v", archive, err))
	}
	tr := tar.NewReader(zr)
	n, entries := 0, 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, errInvalid("file", fmt.Sprintf("file: %s: %v", archive, err))
		}
		if entries++; entries > maxArchiveFiles {
			return 0, errInvalid("file", fmt.Sprintf("file: %s has more than %d entries", archive, maxArchiveFiles))
		}
		dst, err := entryPath(archive, h.Name, dir)
		if err != nil {
			return 0, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return 0, err
			}
		case tar.TypeReg:
			if err := writeFile(dst, tr, fileMode(h.FileInfo().Mode()), room); err != nil {
				return 0, err
			}
			n++
		case tar.TypeSymlink, tar.TypeLink:
			return 0, errInvalid("file", fmt.Sprintf("file: %s: entry %q is a link, only files and directories are allowed", archive, h.Name))
		case tar.TypeXGlobalHeader:
		default:
			return 0, errInvalid("file", fmt.Sprintf("file: %s: entry %q is a special file, only files and directories are allowed", archive, h.Name))
		}
	}
	if n == 0 {
		return 0, errInvalid("file", fmt.Sprintf("file: %s is an empty archive", archive))
	}
	return n, nil
}

// listFiles lists up to max files under dir, relative to it.
func listFiles(dir string, max int) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= max {
			return filepath.SkipAll
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}
