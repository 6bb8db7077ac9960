/**
 * What `--policy` names: an OpenAI-compatible chat server and model (`openai:<base_url>#<model>`)
 * or a trainer checkpoint folder (`checkpoint:<path>`). Parsing only: nothing is contacted here,
 * and an API key never appears in a policy string (it comes from an environment variable).
 */

export type PolicySpec =
  | { kind: 'openai'; baseUrl: string; model: string }
  | { kind: 'checkpoint'; path: string };

export class PolicySpecError extends Error {
  override name = 'PolicySpecError';
}

const FORMS = "give 'openai:<base_url>#<model>' (e.g. openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-VL-3B-Instruct) or 'checkpoint:<path>'";

export function parsePolicySpec(text: string): PolicySpec {
  if (text.startsWith('openai:')) {
    const rest = text.slice('openai:'.length);
    const hash = rest.lastIndexOf('#');
    if (hash < 0) throw new PolicySpecError(`--policy '${text}' names no model: ${FORMS}`);
    const baseUrl = rest.slice(0, hash).replace(/\/+$/u, '');
    const model = rest.slice(hash + 1);
    if (model.trim() === '') throw new PolicySpecError(`--policy '${text}' has an empty model name after '#': ${FORMS}`);
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new PolicySpecError(`--policy '${text}': '${baseUrl}' is not a URL; ${FORMS}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PolicySpecError(`--policy '${text}': the base URL must be http or https, got ${url.protocol}`);
    if (url.username || url.password) {
      throw new PolicySpecError(`--policy '${text}' carries credentials in the URL; put the API key in an environment variable and name it with --api-key-env`);
    }
    return { kind: 'openai', baseUrl, model };
  }
  if (text.startsWith('checkpoint:')) {
    const path = text.slice('checkpoint:'.length);
    if (path === '') throw new PolicySpecError(`--policy '${text}' names no checkpoint folder: ${FORMS}`);
    return { kind: 'checkpoint', path };
  }
  throw new PolicySpecError(`--policy '${text}' is not understood: ${FORMS}`);
}

/** A short name for tables and the dashboard: the model, or the checkpoint's folder names. */
export function policyLabel(spec: PolicySpec): string {
  if (spec.kind === 'openai') return spec.model;
  const parts = spec.path.replace(/\/+$/u, '').split(/[\\/]/u).filter((p) => p !== '');
  const tail = parts.slice(-3);
  // runs/<name>/checkpoints/step-000100 reads best as "<name>/step-000100".
  if (tail.length === 3 && tail[1] === 'checkpoints') return `${tail[0]}/${tail[2]}`;
  return parts[parts.length - 1] ?? spec.path;
}

/** The policy as written in records: never holds a key (there is none in a spec). */
export function describePolicy(spec: PolicySpec): string {
  return spec.kind === 'openai' ? `openai:${spec.baseUrl}#${spec.model}` : `checkpoint:${spec.path}`;
}
