/**
 * One fixed MESSAGE_ID per incident type: `journalctl MESSAGE_ID=…` finds every incident of that
 * type on any machine, whatever its wording. Each was generated once (a random 128-bit id) and
 * never changes: they are a contract with operators' queries and alert rules (docs/journal.md).
 * A new incident type gets a new id; an id is never reused for another meaning.
 */
import type { IncidentType } from '../daemon/incidents';

export const MESSAGE_IDS: Readonly<Record<IncidentType, string>> = {
  'standing-still': 'e05b773aeeb64dc7aad8bb24134a5cd9',
  'brake-raised': '2500977d10d841ddb3ab9d852af4c967',
  'no-room': 'ebcf290f3f74428280dbf485834c1221',
  'will-stop': '168cd614e8084d8abd65441033f966b0',
  'subtree-stopped': '6442e5c022af415d9e7032b8ff0e0980',
  'stop-finished': 'd82c538b210743efa3b1ab6ab82a6cf6',
  'nothing-to-stop': '1532bc64a48e4bfaa041e5eb5b23f36d',
  'oom-kill': 'bb420ce32a8343659f2a70e764b22932',
  cleared: '97a98d5900bb4b24a6121beeb6986111',
  'brake-lowered': 'e16d5036947742e29941501de74f1072',
  'feed-fallback': '308a1f70c1d5441eaf60e28879725598',
  'deadline-dropped': 'ed43a8a9183f4854b0d69bc05dd6b350',
  'procs-reaped': '6c5e226fae5a481db9eeab379697f7f8',
  leftovers: 'e1a5575296a0424ba32e7627f0afba23',
  pegged: '8c05cf4cfaee4a619cfa1197ac025b00',
  missing: '67f584cd2e0c4b94b721d3297ba5acc8',
  silent: '4447c8d006c746c893d36d003e6b1047',
  recovered: 'a774a50697f043d99b43b5840d1ce19d',
  'slice-standing-still': '7ef585c1d8d1445bb3be21c225e97244',
  'slice-brake-raised': 'fa79467dd10241b2bb8602e9862f8346',
  'slice-cleared': '2bb791bb5629400ca97553d1655726a5',
  culprit: '963efd5d216449acbea392a9880bc8aa',
  'machine-short': '4abc44d962214dbaa2869bae40005399',
};
