// Node configuration forms, generated from the compiler's node-config JSON Schemas, with
// widgets of their own for expressions, durations, approvers and key/value maps.
import { useEffect, useRef, useState } from "react";
import type { Api, CheckResult, Config, Json, Schema } from "./api";

/** What /expressions/check checks it as: conditions and edge conditions must be boolean. */
export type ExpressionKind = "condition" | "script" | "edge";

export interface FormContext {
  api: Api;
  entityType: string;
}

// -- expressions ------------------------------------------------------------------------------

export function ExpressionEditor(props: {
  ctx: FormContext;
  value: string;
  onChange: (value: string) => void;
  kind: ExpressionKind;
  testid: string;
  placeholder?: string;
}) {
  const { ctx, value, onChange, kind, testid } = props;
  const [result, setResult] = useState<CheckResult | null>(null);
  const seq = useRef(0);
  useEffect(() => {
    if (!value.trim()) {
      setResult(null);
      return;
    }
    const mine = ++seq.current;
    const timer = window.setTimeout(() => {
      ctx.api
        .check(ctx.entityType, value, kind)
        .then((r) => mine === seq.current && setResult(r))
        .catch((e) => mine === seq.current && setResult({ ok: false, error: { message: String(e.message ?? e) } }));
    }, 350);
    return () => window.clearTimeout(timer);
  }, [value, kind, ctx]);
  return (
    <div className="expr">
      <textarea
        data-testid={testid}
        className={result && !result.ok ? "invalid" : undefined}
        value={value}
        rows={Math.min(4, Math.max(1, value.split("\n").length))}
        spellCheck={false}
        placeholder={props.placeholder ?? (kind === "script" ? "expression" : "entity.grand_total <= 500")}
        onChange={(e) => onChange(e.target.value)}
      />
      {result && result.ok && (
        <div className="expr-ok" data-testid={`${testid}-ok`}>
          ✓ {result.type ?? "valid"}
        </div>
      )}
      {result && !result.ok && <ExpressionProblem source={value} error={result.error} testid={`${testid}-error`} />}
    </div>
  );
}

function ExpressionProblem(props: {
  source: string;
  error: { message: string; caret?: number | null; line?: number | null };
  testid: string;
}) {
  const { source, error } = props;
  const lines = source.split("\n");
  const lineNo = Math.max(1, Math.min(lines.length, error.line ?? 1));
  const caret = error.caret ?? null; // a 0-based column of the line
  return (
    <div className="expr-error" data-testid={props.testid}>
      {caret !== null && (
        <pre className="caret">
          {lines[lineNo - 1]}
          {"\n"}
          {" ".repeat(Math.max(0, caret))}^
        </pre>
      )}
      <div>{error.message}</div>
    </div>
  );
}

// -- durations --------------------------------------------------------------------------------

const UNITS: [string, string][] = [
  ["M", "minutes"],
  ["H", "hours"],
  ["D", "days"],
  ["W", "weeks"],
];

function parseDuration(value: string): { amount: string; unit: string } | null {
  const m = /^P(?:(\d+)([DW])|T(\d+)([HM]))$/.exec(value);
  if (!m) return null;
  return m[1] ? { amount: m[1], unit: m[2] } : { amount: m[3], unit: m[4] };
}

export function formatDuration(amount: string, unit: string): string {
  if (!amount) return "";
  return unit === "D" || unit === "W" ? `P${amount}${unit}` : `PT${amount}${unit}`;
}

export function DurationPicker(props: { value: string; onChange: (v: string) => void; testid: string }) {
  const parsed = parseDuration(props.value);
  const [unit, setUnit] = useState(parsed?.unit ?? "H");
  const amount = parsed?.amount ?? "";
  const custom = props.value !== "" && parsed === null;
  return (
    <div className="duration">
      <input
        type="number"
        min={1}
        data-testid={props.testid}
        value={custom ? "" : amount}
        placeholder={custom ? props.value : ""}
        onChange={(e) => props.onChange(formatDuration(e.target.value, unit))}
      />
      <select
        data-testid={`${props.testid}-unit`}
        value={parsed?.unit ?? unit}
        onChange={(e) => {
          setUnit(e.target.value);
          if (amount) props.onChange(formatDuration(amount, e.target.value));
        }}
      >
        {UNITS.map(([u, name]) => (
          <option key={u} value={u}>
            {name}
          </option>
        ))}
      </select>
      <code className="iso">{props.value || "—"}</code>
    </div>
  );
}

// -- approvers --------------------------------------------------------------------------------

type Approver = { [kind: string]: Json };
const APPROVER_KINDS: [string, string][] = [
  ["role", "role"],
  ["user", "user"],
  ["rule", "rule (expression)"],
  ["managerOf", "manager of requester"],
];

export function ApproversEditor(props: {
  ctx: FormContext;
  value: Approver[];
  onChange: (v: Approver[]) => void;
  testid: string;
}) {
  const list = props.value;
  const set = (i: number, a: Approver) => props.onChange(list.map((x, j) => (j === i ? a : x)));
  return (
    <div className="approvers" data-testid={props.testid}>
      {list.map((approver, i) => {
        const kind = Object.keys(approver)[0] ?? "role";
        const value = String(approver[kind] ?? "");
        return (
          <div className="approver" key={i}>
            <select
              data-testid={`${props.testid}-${i}-kind`}
              value={kind}
              onChange={(e) => set(i, { [e.target.value]: e.target.value === "managerOf" ? "requester" : "" })}
            >
              {APPROVER_KINDS.map(([k, name]) => (
                <option key={k} value={k}>
                  {name}
                </option>
              ))}
            </select>
            {kind === "rule" ? (
              <ExpressionEditor
                ctx={props.ctx}
                kind="script"
                testid={`${props.testid}-${i}-value`}
                value={value}
                onChange={(v) => set(i, { rule: v })}
                placeholder="entity.cost_center"
              />
            ) : kind === "managerOf" ? (
              <span className="muted">the requester's manager</span>
            ) : (
              <input
                data-testid={`${props.testid}-${i}-value`}
                value={value}
                placeholder={kind === "role" ? "ap_clerk" : "user id"}
                onChange={(e) => set(i, { [kind]: e.target.value })}
              />
            )}
            <button type="button" className="small" onClick={() => props.onChange(list.filter((_, j) => j !== i))}>
              ✕
            </button>
          </div>
        );
      })}
      <button type="button" className="small" data-testid={`${props.testid}-add`} onClick={() => props.onChange([...list, { role: "" }])}>
        + approver
      </button>
    </div>
  );
}

// -- key/value maps (payload templates: expressions; headers: text) ---------------------------

export function KeyValueEditor(props: {
  value: Record<string, Json>;
  onChange: (v: Record<string, Json>) => void;
  testid: string;
  valueHint: string;
}) {
  const entries = Object.entries(props.value);
  const rebuild = (pairs: [string, Json][]) => props.onChange(Object.fromEntries(pairs));
  return (
    <div className="kv" data-testid={props.testid}>
      {entries.map(([k, v], i) => (
        <div className="kv-row" key={i}>
          <input
            value={k}
            placeholder="name"
            data-testid={`${props.testid}-${i}-key`}
            onChange={(e) => rebuild(entries.map((p, j) => (j === i ? [e.target.value, p[1]] : p)))}
          />
          <input
            value={String(v ?? "")}
            placeholder={props.valueHint}
            data-testid={`${props.testid}-${i}-value`}
            onChange={(e) => rebuild(entries.map((p, j) => (j === i ? [p[0], e.target.value] : p)))}
          />
          <button type="button" className="small" onClick={() => rebuild(entries.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <button
        type="button"
        className="small"
        data-testid={`${props.testid}-add`}
        onClick={() => rebuild([...entries, [`key${entries.length + 1}`, ""]])}
      >
        + entry
      </button>
    </div>
  );
}

// -- the generated form -----------------------------------------------------------------------

const EXPRESSION_KEYS = new Set(["expression", "until"]);

function isDuration(prop: Schema): boolean {
  return typeof prop.pattern === "string" && prop.pattern.startsWith("^(?=.*[1-9])P");
}

/** The properties that apply to ``config``: a schema with variants (an approval's mode) takes
 * the variant whose discriminating enum matches, else the first. */
export function formProperties(schema: Schema, config: Config): { props: Record<string, Schema>; required: string[] } {
  const variants: Schema[] = (schema.oneOf ?? []).filter((v: Schema) => v.properties);
  if (variants.length === 0) return { props: schema.properties ?? {}, required: schema.required ?? [] };
  const chosen =
    variants.find((v) =>
      Object.entries<Schema>(v.properties).every(
        ([key, p]) => !(p.enum && p.enum.length === 1) || (config[key] ?? p.default) === p.enum[0],
      ),
    ) ?? variants[0];
  // The discriminator offers every variant's value.
  const props: Record<string, Schema> = { ...chosen.properties };
  for (const [key, p] of Object.entries<Schema>(chosen.properties)) {
    if (p.enum && p.enum.length === 1) {
      const options = variants.map((v) => v.properties[key]?.enum?.[0]).filter(Boolean);
      props[key] = { ...p, enum: options };
    }
  }
  return { props, required: chosen.required ?? [] };
}

export function NodeForm(props: {
  ctx: FormContext;
  nodeType: string;
  schema: Schema;
  config: Config;
  onChange: (config: Config) => void;
}) {
  const { ctx, nodeType, schema, config, onChange } = props;
  const { props: properties, required } = formProperties(schema, config);
  const exactlyOne: string[] = (schema.oneOf ?? []).filter((v: Schema) => !v.properties).flatMap((v: Schema) => v.required ?? []);
  const set = (key: string, value: Json | undefined) => {
    const next: Config = { ...config };
    if (value === undefined || value === "") delete next[key];
    else next[key] = value;
    // Settings of another variant do not apply any more.
    const { props: after } = formProperties(schema, next);
    for (const k of Object.keys(next)) if (!(k in after)) delete next[k];
    onChange(next);
  };
  const keys = Object.keys(properties);
  if (keys.length === 0) {
    return (
      <p className="muted">
        {nodeType === "parallel_split"
          ? "Runs every outgoing path at once. Connect two or more."
          : "No settings."}
      </p>
    );
  }
  return (
    <div className="node-form">
      {exactlyOne.length > 0 && <p className="muted">Set exactly one of {exactlyOne.join(" or ")}.</p>}
      {nodeType === "parallel_join" && (
        <p className="muted">Waits for the branches of its parallel split; it counts them itself.</p>
      )}
      {keys.map((key) => (
        <label key={key} className="field">
          <span className="field-name">
            {key}
            {required.includes(key) && <span className="req"> *</span>}
          </span>
          <Field ctx={ctx} nodeType={nodeType} name={key} prop={properties[key]} value={config[key]} onChange={(v) => set(key, v)} />
        </label>
      ))}
    </div>
  );
}

function Field(props: {
  ctx: FormContext;
  nodeType: string;
  name: string;
  prop: Schema;
  value: Json | undefined;
  onChange: (v: Json | undefined) => void;
}) {
  const { ctx, nodeType, name, prop, value, onChange } = props;
  const testid = `field-${name}`;
  if (prop.type === "array" && prop.items?.properties?.managerOf) {
    return (
      <ApproversEditor
        ctx={ctx}
        testid={testid}
        value={Array.isArray(value) ? (value as Approver[]) : []}
        onChange={(v) => onChange(v.length ? v : undefined)}
      />
    );
  }
  if (prop.enum) {
    return (
      <select data-testid={testid} value={String(value ?? prop.default ?? "")} onChange={(e) => onChange(e.target.value)}>
        {prop.default === undefined && <option value="">—</option>}
        {prop.enum.map((o: string) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  }
  if (prop.type === "string" && isDuration(prop)) {
    return <DurationPicker testid={testid} value={String(value ?? "")} onChange={(v) => onChange(v || undefined)} />;
  }
  if (prop.type === "string" && EXPRESSION_KEYS.has(name)) {
    return (
      <ExpressionEditor
        ctx={ctx}
        testid={testid}
        kind={nodeType === "condition" ? "condition" : "script"}
        value={String(value ?? "")}
        onChange={(v) => onChange(v)}
      />
    );
  }
  if (prop.type === "object" && prop.additionalProperties) {
    const expressions = prop.additionalProperties.pattern !== undefined;
    return (
      <KeyValueEditor
        testid={testid}
        valueHint={expressions ? "expression, e.g. entity.vendor_id" : "value"}
        value={value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Json>) : {}}
        onChange={(v) => onChange(Object.keys(v).length ? v : undefined)}
      />
    );
  }
  if (prop.type === "number" || prop.type === "integer") {
    return (
      <input
        type="number"
        data-testid={testid}
        value={value === undefined || value === null ? "" : String(value)}
        onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
      />
    );
  }
  if (prop.type === "boolean") {
    return <input type="checkbox" data-testid={testid} checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
  }
  if (prop.type === "string") {
    const long = name === "body";
    return long ? (
      <textarea data-testid={testid} rows={3} value={String(value ?? "")} onChange={(e) => onChange(e.target.value)} />
    ) : (
      <input data-testid={testid} value={String(value ?? "")} onChange={(e) => onChange(e.target.value)} />
    );
  }
  return <JsonField testid={testid} value={value} onChange={onChange} />;
}

function JsonField(props: { testid: string; value: Json | undefined; onChange: (v: Json | undefined) => void }) {
  const [text, setText] = useState(props.value === undefined ? "" : JSON.stringify(props.value, null, 1));
  const [bad, setBad] = useState(false);
  return (
    <textarea
      data-testid={props.testid}
      className={bad ? "invalid" : undefined}
      rows={3}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        try {
          props.onChange(e.target.value.trim() ? JSON.parse(e.target.value) : undefined);
          setBad(false);
        } catch {
          setBad(true);
        }
      }}
    />
  );
}
