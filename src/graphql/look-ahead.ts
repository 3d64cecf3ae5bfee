import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import type { EntityClass } from '@mikro-orm/core';
import { CURSOR_FIELDS, relationsOf, WHOLE_ROWS, type NestedRead, type PageSelection } from '../db/nested-relation.js';

// Look-ahead, as PostGraphile does it: a list resolver reads which relation of its rows the
// selection asks for, and with which arguments, so the service can read that relation in the list's
// own statement. Only the plain case is taken: a relation selected once under one name, without
// @include/@skip on the way. Anything else answers null and the relation resolves as it always did,
// through its batch; a look-ahead can make a request cheaper, never different.

export interface Selection {
  /** The field's arguments, coerced (defaults applied, variables read). */
  args: Record<string, unknown>;
  /** The names of the fields selected directly under it. */
  fields: Set<string>;
  /** The selection of one of those fields, on the same terms. */
  child(name: string): Selection | null;
}

/** Every field node directly in `selectionSet` (fragments spread), or null where a directive makes it conditional. */
function fieldNodes(selectionSet: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>): FieldNode[] | null {
  const found: FieldNode[] = [];
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.directives?.length) return null;
    if (selection.kind === Kind.FIELD) found.push(selection);
    else {
      const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
      const nested = fieldNodes(inner, fragments);
      if (!nested) return null;
      found.push(...nested);
    }
  }
  return found;
}

function selectionOf(node: FieldNode, field: GraphQLField<unknown, unknown>, info: GraphQLResolveInfo): Selection | null {
  const nodes = fieldNodes(node.selectionSet, info.fragments);
  if (!nodes) return null;
  const type = getNamedType(field.type);
  return {
    args: getArgumentValues(field, node, info.variableValues),
    fields: new Set(nodes.map((each) => each.name.value)),
    child(name) {
      const matching = nodes.filter((each) => each.name.value === name);
      const definition = isObjectType(type) ? (type as GraphQLObjectType).getFields()[name] : undefined;
      if (matching.length !== 1 || !definition) return null;
      return selectionOf(matching[0]!, definition, info);
    },
  };
}

/** The selection of the field being resolved, or null when it is not a plain one. */
export function lookAhead(info: GraphQLResolveInfo): Selection | null {
  if (info.fieldNodes.length !== 1) return null;
  const field = info.parentType.getFields()[info.fieldName];
  return field ? selectionOf(info.fieldNodes[0]!, field, info) : null;
}

/**
 * The declared relations of `parent` (see nestedRelation) that the selection of a list of parents asks
 * for plainly under `data`, with the arguments their field would accept: what the list may read with
 * its rows. A relation selected otherwise (twice, under a directive, with arguments the field refuses,
 * or a child field the read path declines) is left out and its field resolves through its batch.
 * With them, the fields selected under `data` (the columns the page reads); a `data` selected in a way
 * the look-ahead does not read (under a directive, a fragment with one) reads every column and no relation.
 */
export async function pageSelectionOf(info: GraphQLResolveInfo, parent: EntityClass<object>): Promise<PageSelection> {
  const relations = relationsOf(parent);
  const data = lookAhead(info)?.child('data');
  if (!data) return WHOLE_ROWS;
  const reads: NestedRead[] = [];
  for (const relation of relations) {
    const selection = data.fields.has(relation.field) ? data.child(relation.field) : null;
    if (!selection) continue;
    const rows = relation.shape === 'page' ? selection.child('data') : selection;
    // A page whose rows are selected in a way the look-ahead does not read: the batch answers it.
    if (!rows && selection.fields.has('data')) continue;
    const fields: ReadonlySet<string> = rows?.fields ?? new Set();
    if (relation.declines?.(fields)) continue;
    // Cursors are written by the relation's batch only.
    if (relation.cursors && selection.fields.has('meta')) {
      const meta = selection.child('meta');
      if (!meta || CURSOR_FIELDS.some((name) => meta.fields.has(name))) continue;
    }
    const args = await relation.readArgs(selection.args);
    if (args) reads.push({ relation, args, fields, withTotal: selection.fields.has('meta') });
  }
  return { reads, fields: data.fields };
}
