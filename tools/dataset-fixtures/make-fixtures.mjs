// Writes the datasets trnslurm's dataset tests count, with implementations independent of
// trnslurm's own reader: Apache Arrow JS writes every .arrow file, and the Megatron .idx/.bin
// files are laid out here byte by byte from Megatron-LM's indexed_dataset.py layout.
//
// Usage: npm ci && node make-fixtures.mjs <output dir>   (npm run generate writes the committed set)
//
// The counts each dataset must give are written to expected.json beside them, so the C++ tests
// compare trnslurm's reader against this script rather than against numbers typed into a test.
// Everything is deterministic: running it again rewrites identical files.
import * as A from 'apache-arrow';
import fs from 'node:fs';
import path from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node make-fixtures.mjs <output dir>');
  process.exit(2);
}
fs.rmSync(out, {recursive: true, force: true});
fs.mkdirSync(out, {recursive: true});
const expected = {};

// A small LCG: deterministic across Node versions, unlike Math.random.
let seed = 20261122;
function rand(n) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
}

const listType = new A.List(new A.Field('item', new A.Int32(), true));
const fixedType = (n) => new A.FixedSizeList(n, new A.Field('item', new A.Int32(), true));

// One record batch: a text column and an int64 column before the tokens, so a reader has to walk
// the buffers of other columns to find the token offsets, then the tokens, then a label after.
function batch(rows, seqLen, {fixed = false, ragged = false} = {}) {
  const text = [], ids = [], tokens = [];
  let total = 0;
  for (let i = 0; i < rows; i++) {
    text.push('row ' + rand(100000) + ' ' + 'x'.repeat(rand(12)));
    ids.push(BigInt(rand(1 << 30)));
    const len = ragged ? 1 + rand(2 * seqLen) : seqLen;
    total += len;
    tokens.push(Int32Array.from({length: len}, () => rand(50000)));
  }
  const table = new A.Table({
    text: A.vectorFromArray(text, new A.Utf8()),
    id: A.vectorFromArray(ids, new A.Int64()),
    input_ids: A.vectorFromArray(tokens, fixed ? fixedType(seqLen) : listType),
    label: A.vectorFromArray(Array.from({length: rows}, () => rand(2)), new A.Int32()),
  });
  return {batches: table.batches, tokens: total};
}

// A table of several record batches of at most batchRows rows (Hugging Face writes 1000).
function table(rows, batchRows, seqLen, opts = {}) {
  let batches = [], tokens = 0;
  for (let done = 0; done < rows; done += batchRows) {
    const b = batch(Math.min(batchRows, rows - done), seqLen, opts);
    batches = batches.concat(b.batches);
    tokens += b.tokens;
  }
  const fields = batch(1, seqLen, opts).batches[0].schema.fields;
  const schema = new A.Schema(fields, new Map([['huggingface', '{"info": {"features": {}}}']]));
  const t = new A.Table(schema, batches.map((b) => new A.RecordBatch(schema, b.data)));
  return {table: t, rows, tokens};
}

function write(file, t, format) {
  fs.mkdirSync(path.dirname(file), {recursive: true});
  fs.writeFileSync(file, A.tableToIPC(t, format));
}

// A Hugging Face save_to_disk directory: state.json lists the shards in order, dataset_info.json
// carries a count that is deliberately stale (as after map/filter) when staleCount is given.
function hfDataset(dir, shardRows, seqLen, opts = {}) {
  fs.mkdirSync(dir, {recursive: true});
  const n = shardRows.length;
  const files = [];
  let rows = 0, tokens = 0;
  shardRows.forEach((r, i) => {
    const name = `data-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.arrow`;
    const t = table(r, opts.batchRows ?? 10, seqLen, opts);
    write(path.join(dir, name), t.table, 'stream');
    files.push({filename: name});
    rows += t.rows;
    tokens += t.tokens;
  });
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({
    _data_files: files,
    _fingerprint: 'f00d',
    _format_columns: null,
    _format_kwargs: {},
    _format_type: null,
    _output_all_columns: false,
    _split: opts.split ?? 'train',
  }, null, 2));
  const numExamples = opts.staleCount ?? null;
  fs.writeFileSync(path.join(dir, 'dataset_info.json'), JSON.stringify({
    citation: '', description: '', features: {},
    splits: {[opts.split ?? 'train']: {name: opts.split ?? 'train', num_bytes: 0, num_examples: numExamples}},
  }, null, 2));
  return {rows, tokens, files: n};
}

// hf_list: List<int32> tokens, 3 shards of several batches, a stale dataset_info.json count,
// and a stray shard that state.json does not list (a reader that globs counts it).
{
  const r = hfDataset(path.join(out, 'hf_list'), [25, 30, 7], 8, {staleCount: 1000});
  write(path.join(out, 'hf_list', 'data-00099-of-00100.arrow'), table(50, 10, 8).table, 'stream');
  expected.hf_list = {format: 'hf', rows: r.rows, tokens: r.tokens, files: r.files, seq_len: 8, stale: 1000};
}
// hf_fixed: FixedSizeList<int32, 16>: the schema itself says 16 tokens per row.
{
  const r = hfDataset(path.join(out, 'hf_fixed'), [12, 20], 16, {fixed: true, batchRows: 5});
  expected.hf_fixed = {format: 'hf', rows: r.rows, tokens: r.tokens, files: r.files, seq_len: 16};
}
// hf_ragged: List<int32> rows of varying length: --verify with a seq_len must refuse it.
{
  const r = hfDataset(path.join(out, 'hf_ragged'), [9, 11], 8, {ragged: true, batchRows: 4});
  expected.hf_ragged = {format: 'hf', rows: r.rows, tokens: r.tokens, files: r.files, seq_len: 8};
}
// hf_dict: a DatasetDict with train and validation splits.
{
  const d = path.join(out, 'hf_dict');
  const train = hfDataset(path.join(d, 'train'), [15, 15], 8, {split: 'train', staleCount: 31});
  const val = hfDataset(path.join(d, 'validation'), [6], 8, {split: 'validation'});
  fs.writeFileSync(path.join(d, 'dataset_dict.json'), JSON.stringify({splits: ['train', 'validation']}));
  expected.hf_dict = {format: 'hf_dict', rows: train.rows, tokens: train.tokens, files: train.files, seq_len: 8,
                      stale: 31};
  expected.hf_dict_validation = {format: 'hf_dict', rows: val.rows, tokens: val.tokens, files: val.files, seq_len: 8};
}
// hf_empty: one shard holding a schema and no record batch.
{
  const d = path.join(out, 'hf_empty');
  const r = hfDataset(d, [0], 8);
  expected.hf_empty = {format: 'hf', rows: 0, tokens: 0, files: r.files, seq_len: 8};
}
// hf_legacy: datasets < 2.8 wrote a single dataset.arrow.
{
  const d = path.join(out, 'hf_legacy');
  const t = table(23, 10, 8);
  write(path.join(d, 'dataset.arrow'), t.table, 'stream');
  expected.hf_legacy = {format: 'hf', rows: t.rows, tokens: t.tokens, files: 1, seq_len: 8};
}
// Arrow file format (ARROW1 magic and footer), List and FixedSizeList tokens.
{
  const t = table(42, 10, 8);
  write(path.join(out, 'arrow', 'list_file.arrow'), t.table, 'file');
  expected.list_file = {format: 'arrow_file', rows: t.rows, tokens: t.tokens, files: 1, seq_len: 8};
  const f = table(33, 8, 4, {fixed: true});
  write(path.join(out, 'arrow', 'fixed_file.arrow'), f.table, 'file');
  expected.fixed_file = {format: 'arrow_file', rows: f.rows, tokens: f.tokens, files: 1, seq_len: 4};
  const s = table(17, 5, 8);
  write(path.join(out, 'arrow', 'list_stream.arrow'), s.table, 'stream');
  expected.list_stream = {format: 'arrow_file', rows: s.rows, tokens: s.tokens, files: 1, seq_len: 8};
}

// Megatron .idx/.bin (MMIDIDX version 1), little-endian, laid out as indexed_dataset.py writes it.
const dtypes = {u8: [1, 1], i8: [2, 1], i16: [3, 2], i32: [4, 4], i64: [5, 8], u16: [8, 2]};
function megatron(prefix, code, itemSize, sizes, docs, patch = {}) {
  const S = sizes.length, D = docs.length;
  const idx = Buffer.alloc(34 + 12 * S + 8 * D);
  Buffer.from('MMIDIDX\x00\x00', 'latin1').copy(idx, 0);
  idx.writeBigUInt64LE(BigInt(patch.version ?? 1), 9);
  idx.writeUInt8(code, 17);
  idx.writeBigUInt64LE(BigInt(patch.S ?? S), 18);
  idx.writeBigUInt64LE(BigInt(patch.D ?? D), 26);
  let pointer = 0;
  sizes.forEach((s, i) => {
    idx.writeInt32LE(s, 34 + 4 * i);
    idx.writeBigInt64LE(BigInt(pointer), 34 + 4 * S + 8 * i);
    pointer += s * itemSize;
  });
  docs.forEach((d, i) => idx.writeBigInt64LE(BigInt(d), 34 + 12 * S + 8 * i));
  if (patch.magic) Buffer.from(patch.magic, 'latin1').copy(idx, 0);
  fs.mkdirSync(path.dirname(prefix), {recursive: true});
  fs.writeFileSync(prefix + '.idx', patch.truncate ? idx.subarray(0, patch.truncate) : idx);
  fs.writeFileSync(prefix + '.bin', Buffer.alloc(patch.binBytes ?? pointer));
  return sizes.reduce((a, b) => a + b, 0);
}
const mdir = path.join(out, 'megatron');
for (const [name, [code, itemSize]] of Object.entries(dtypes)) {
  const S = 5 + rand(20);
  const sizes = Array.from({length: S}, () => 1 + rand(300));
  const docs = [0];
  for (let i = 1; i < S; i++) if (rand(3) === 0) docs.push(i);
  docs.push(S);
  const tokens = megatron(path.join(mdir, `tokens_${name}`), code, itemSize, sizes, docs);
  expected[`megatron_${name}`] = {format: 'megatron', rows: S, tokens, files: 1, documents: docs.length - 1};
}
// Broken ones: each must be an error naming the file and a byte offset.
const small = [10, 20, 30];
megatron(path.join(mdir, 'bad_magic'), 8, 2, small, [0, 3], {magic: 'MMIDIDY'});
megatron(path.join(mdir, 'bad_version'), 8, 2, small, [0, 3], {version: 2});
megatron(path.join(mdir, 'float_dtype'), 6, 4, small, [0, 3]);
megatron(path.join(mdir, 'count_mismatch'), 8, 2, small, [0, 3], {S: 4});
megatron(path.join(mdir, 'truncated'), 8, 2, small, [0, 3], {truncate: 60});
megatron(path.join(mdir, 'negative_size'), 8, 2, [10, -5, 30], [0, 3]);
megatron(path.join(mdir, 'bad_documents'), 8, 2, small, [0, 2]);
megatron(path.join(mdir, 'short_bin'), 8, 2, small, [0, 3], {binBytes: 7});

fs.writeFileSync(path.join(out, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
console.log(`wrote ${Object.keys(expected).length} datasets to ${out}`);
