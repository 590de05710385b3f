/**
 * Reads the final stage of the project's Dockerfile: what the production image adds on top of its
 * base. The node's local operator image is made from this reading, so the two cannot drift: an
 * instruction this reader does not know is an error, not something silently left out.
 */
export interface FinalStage {
  /** The base image of the final stage (replaced locally by a base with the same layout). */
  from: string;
  env: Record<string, string>;
  /** COPY --from=STAGE SRC DEST: SRC is a path inside that build stage. */
  copies: Array<{ fromStage: string; source: string; dest: string }>;
  user: string;
  exposedPorts: string[];
  entrypoint: string[];
  /** The WORKDIR of each build stage, by name, to map a stage's paths to the source tree. */
  stageWorkdirs: Record<string, string>;
}

/** Joins continuation lines and drops comments and blank lines. */
function instructions(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    out.push((pending + line).trim());
    pending = '';
  }
  return out;
}

export function parseFinalStage(text: string): FinalStage {
  const stageWorkdirs: Record<string, string> = {};
  let stage: FinalStage | undefined;
  let currentStage = '';
  for (const instruction of instructions(text)) {
    const [keyword = '', ...rest] = instruction.split(/\s+/);
    const args = rest.join(' ');
    const op = keyword.toUpperCase();
    if (op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!m) throw new Error(`Dockerfile: cannot read FROM ${args}`);
      currentStage = m[2] ?? '';
      stage = { from: m[1]!, env: {}, copies: [], user: '', exposedPorts: [], entrypoint: [], stageWorkdirs };
      continue;
    }
    if (!stage) throw new Error(`Dockerfile: ${op} before FROM`);
    switch (op) {
      case 'WORKDIR':
        stageWorkdirs[currentStage] = args;
        break;
      case 'ENV': {
        const m = /^(\w+)=(.*)$/.exec(args);
        if (!m) throw new Error(`Dockerfile: ENV must be KEY=VALUE, got ${args}`);
        stage.env[m[1]!] = m[2]!;
        break;
      }
      case 'COPY': {
        const m = /^--from=(\S+)\s+(\S+)\s+(\S+)$/.exec(args);
        if (m) stage.copies.push({ fromStage: m[1]!, source: m[2]!, dest: m[3]! });
        else if (currentStage === '') throw new Error(`Dockerfile: the final stage may only COPY --from a build stage, got ${args}`);
        break;
      }
      case 'USER':
        stage.user = args;
        break;
      case 'EXPOSE':
        stage.exposedPorts = rest.map((p) => (p.includes('/') ? p : `${p}/tcp`));
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = JSON.parse(args) as string[];
        break;
      case 'RUN':
      case 'ARG':
        if (currentStage === '') throw new Error(`Dockerfile: the final stage has ${op}, which the local image cannot reproduce`);
        break;
      default:
        if (currentStage === '') throw new Error(`Dockerfile: the final stage has ${op}, which the local image builder does not know`);
    }
  }
  if (!stage || currentStage !== '') throw new Error('Dockerfile: the final stage must be unnamed');
  return stage;
}
