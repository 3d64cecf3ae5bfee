import { plainToInstance } from 'class-transformer';
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
import { validateInstance } from '../common/validation.js';

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
 * The arguments as the field's resolver would get them: an instance of `type`, validated the same
 * way; null when they are not valid (the resolver then refuses them itself, as before).
 */
export async function validArgs<T extends object>(type: new () => T, args: Record<string, unknown>): Promise<T | null> {
  const instance = plainToInstance(type, args);
  try {
    await validateInstance(instance);
    return instance;
  } catch {
    return null;
  }
}
