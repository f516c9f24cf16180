// The Go template emulation the chart tests rely on: where it would disagree with helm, a chart bug would hide.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readFakePem, TemplateError, TemplateSet, type RenderContext } from './support/go-template.ts';
import { at } from './support/kube.ts';

const context: RenderContext = {
  Values: { name: 'web', replicas: 2, big: 1000000, ratio: 0.05, empty: {}, list: ['a', 'b'], labels: { b: '2', a: '1' }, nested: { on: true } },
  Release: { Name: 'rel', Namespace: 'ns' },
  Chart: { Name: 'chart', AppVersion: '1.0.0' },
};

function render(source: string, data: RenderContext = context): string {
  const set = new TemplateSet();
  set.add('t.yaml', source);
  return set.render('t.yaml', data);
}

describe('the Go template emulation', () => {
  test('trims whitespace at {{- and -}} only', () => {
    assert.equal(render('a  \n  {{- "b" -}}  \n  c'), 'abc');
    assert.equal(render('a {{ "b" }} c'), 'a b c');
    assert.equal(render('x\n{{- /* note */}}\ny'), 'x\ny');
  });

  test('prints Helm values as float64 does, ints as ints', () => {
    assert.equal(render('{{ .Values.replicas }} {{ .Values.big }} {{ .Values.ratio }} {{ int .Values.big }}'), '2 1e+06 0.05 1000000');
  });

  test('refuses to compare a float64 value with an int literal, as Go does', () => {
    assert.throws(() => render('{{ if gt .Values.replicas 1 }}x{{ end }}'), /incompatible types/);
    assert.equal(render('{{ if gt (int .Values.replicas) 1 }}x{{ end }}'), 'x');
  });

  test('prints nothing for a missing key but fails on a field of nothing', () => {
    assert.equal(render('[{{ .Values.missing }}]'), '[]');
    assert.throws(() => render('{{ .Values.missing.deeper }}'), /nil pointer evaluating interface \{\}\.deeper/);
  });

  test('chains else if and treats empty maps, lists and strings as false', () => {
    const source = '{{ if .Values.empty }}map{{ else if .Values.nothing }}none{{ else if .Values.list }}list{{ else }}else{{ end }}';
    assert.equal(render(source), 'list');
    assert.equal(render('{{ with .Values.nested }}{{ .on }}{{ else }}no{{ end }}'), 'true');
  });

  test('scopes variables to their block but lets = reach an outer one', () => {
    assert.equal(render('{{ $a := "x" }}{{ if true }}{{ $a = "y" }}{{ $b := "z" }}{{ end }}{{ $a }}'), 'y');
    assert.throws(() => render('{{ if true }}{{ $b := "z" }}{{ end }}{{ $b }}'), /undefined variable \$b/);
  });

  test('ranges over maps in key order and over lists with the index', () => {
    assert.equal(render('{{ range $k, $v := .Values.labels }}{{ $k }}={{ $v }};{{ end }}'), 'a=1;b=2;');
    assert.equal(render('{{ range $i, $v := .Values.list }}{{ $i }}{{ $v }}{{ end }}'), '0a1b');
  });

  test('pipes the value in as the last argument (Sprig order) and formats with toYaml and nindent', () => {
    assert.equal(render('{{ .Values.name | default "x" | quote }} {{ "" | default "x" }}'), '"web" x');
    assert.equal(render('l:{{ toYaml .Values.labels | nindent 2 }}'), 'l:\n  a: "1"\n  b: "2"');
    assert.equal(render('{{ "abcdef-" | trunc 6 | trimSuffix "-" }}'), 'abcdef');
  });

  test('includes defines with their own dot and keeps raw strings verbatim', () => {
    assert.equal(render('{{ define "x" }}<{{ .Release.Name }}>{{ end }}{{ include "x" . }}'), '<rel>');
    assert.equal(render('{{`{{ $labels.pod }}`}}'), '{{ $labels.pod }}');
  });

  test('fails on required values, unknown functions and unbalanced blocks', () => {
    assert.throws(() => render('{{ required "name it" .Values.missing }}'), /name it/);
    assert.throws(() => render('{{ toToml .Values }}'), /function "toToml" not defined/);
    assert.throws(() => render('{{ if true }}x'), TemplateError);
    assert.throws(() => render('x{{ end }}'), TemplateError);
  });

  test('genSignedCert records the CA it was signed by', () => {
    const out = render('{{ $ca := genCA "ca" 10 }}{{ $c := genSignedCert "svc" nil (list "svc.ns.svc") 10 $ca }}{{ $c.Cert }}');
    const cert = readFakePem(out);
    assert.deepEqual(at(cert, 'alternateNames'), ['svc.ns.svc']);
    assert.equal(at(cert, 'issuer.commonName'), 'ca');
    assert.throws(() => render('{{ $ca := genCA "ca" .Values.replicas }}'), /int days/);
  });
});
