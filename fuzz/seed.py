"""Writes the seed corpus of the three targets into fuzz/corpus/<target>/ (see README.md)."""
import glob, os, re, hashlib
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
out = root + '/fuzz/corpus'
def put(target, data):
    d = os.path.join(out, target); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, 'seed-' + hashlib.sha1(data).hexdigest()[:16]), 'wb').write(data)
cu, rs = [], []
for p in glob.glob(root + '/examples/*.cu') + glob.glob(root + '/examples/*.cuh') + glob.glob(root + '/analyzer/tests/scale/*.cu'):
    cu.append(open(p, 'rb').read())
for p in glob.glob(root + '/examples/*.rs'):
    rs.append(open(p, 'rb').read())
raw = re.compile(r'r(#*)"(.*?)"\1', re.S)
for p in glob.glob(root + '/analyzer/tests/*.rs') + glob.glob(root + '/analyzer/src/**/*.rs', recursive=True):
    for m in raw.finditer(open(p).read()):
        t = m.group(2)
        if '__global__' in t or '#include' in t or '#define' in t:
            cu.append(t.encode())
        elif 'fn ' in t and ('thread::' in t or 'kernel' in t or '&mut [' in t):
            rs.append(t.encode())
for p in glob.glob(root + '/analyzer/tests/fuzz_corpus/*'):
    n = os.path.basename(p); data = open(p, 'rb').read()
    put(n.split('-')[0], data)
heads = [bytes([1, 0, 31, 0, 20, 20, 24, 17]), bytes([3, 1, 10, 1, 48, 16, 80, 20])]
for t in cu:
    put('cuda_front', t)
    for h in heads:
        put('analyze', h + t)
for t in rs:
    put('rust_front', t)
for t in ('analyze', 'cuda_front', 'rust_front'):
    print(t, len(os.listdir(os.path.join(out, t))))
