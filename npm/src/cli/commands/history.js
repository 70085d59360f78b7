import { MemloomError } from '../../errors.js';

/** @type {import('../spec.js').CommandSpec} */
export default {
  name: 'history',
  summary: 'every version of a memory key',
  description: 'Lists every version of a memory key, oldest first: its status (active for the newest, superseded for older ones), when it held (valid from .. to; docs/TIME.md), its event time if it has one, and its text.',
  args: [{ name: 'key', description: 'the memory key, as given to remember --key' }],
  examples: [['memloom history deploy-freeze', 'v1 superseded ..., v2 active ...']],
  json: '[{id, version, status, content, createdAt, validFrom, validTo, eventAt}] oldest first',
  async run(ctx, [key]) {
    return ctx.withStore(async (store) => {
      const versions = await store.history(key);
      if (versions.length === 0) throw new MemloomError(`no memory with key "${key}" in namespace ${store.namespace}`);
      if (ctx.json) ctx.outJson(versions);
      else {
        for (const h of versions) {
          const held = `${h.validFrom} .. ${h.validTo ?? 'now'.padEnd(24)}`;
          ctx.out(`v${h.version}  ${h.status.padEnd(10)}  ${held}  ${h.eventAt ? `event ${h.eventAt}  ` : ''}${h.content}`);
        }
      }
      return 0;
    });
  },
};
